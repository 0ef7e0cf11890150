// Runs a wasm32-wasip1 program under Node's built-in WASI, with the
// working directory and the MovingAI data (FRONTIER_MOVINGAI_DIR) readable,
// so paths given on the command line are found:
//   node tools/wasi_run.mjs PROGRAM.wasm [ARGS...]
// Exits with the program's exit code.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, env, exit, cwd } from 'node:process';
import { resolve } from 'node:path';

const [program, ...args] = argv.slice(2);
if (!program) {
  console.error('usage: node tools/wasi_run.mjs PROGRAM.wasm [ARGS...]');
  exit(2);
}
const preopens = { '.': cwd(), [cwd()]: cwd() };
for (const dir of [env.FRONTIER_MOVINGAI_DIR, resolve(cwd(), '..')]) {
  if (dir) preopens[dir] = dir;
}
const wasi = new WASI({
  version: 'preview1',
  args: [program, ...args],
  env: { FRONTIER_MOVINGAI_DIR: env.FRONTIER_MOVINGAI_DIR ?? '' },
  preopens,
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
