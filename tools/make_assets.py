#!/usr/bin/env python3
"""Makes the RTS example's assets: assets/maps/frontier.map (MovingAI format),
assets/tiles.png (the tileset) and the unit sprites assets/infantry.png and
assets/vehicle.png (white, facing right; the game tints them with the team's
colour and turns them the way the unit goes). Standard library only, fixed
seed, so the files come out the same on every run:

    python3 tools/make_assets.py

Map terrain: '.' ground, 'S' swamp (rough: the example gives it cost 4),
'@' rock, 'T' trees, 'W' water. Tileset order (16x16 each, one row):
ground, swamp, rock, trees, water, mud (cost 8, made in game with T+click).
"""

import random
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 128, 80
TILE = 16


def make_map(rng):
    grid = [["." for _ in range(WIDTH)] for _ in range(HEIGHT)]

    def fill(x0, y0, x1, y1, c):
        for y in range(max(0, y0), min(HEIGHT, y1 + 1)):
            for x in range(max(0, x0), min(WIDTH, x1 + 1)):
                grid[y][x] = c

    # Border of rock.
    fill(0, 0, WIDTH - 1, 0, "@")
    fill(0, HEIGHT - 1, WIDTH - 1, HEIGHT - 1, "@")
    fill(0, 0, 0, HEIGHT - 1, "@")
    fill(WIDTH - 1, 0, WIDTH - 1, HEIGHT - 1, "@")
    # A river down the middle, wandering, with three bridges.
    x = 62
    for y in range(1, HEIGHT - 1):
        x += rng.choice((-1, 0, 0, 1))
        x = max(56, min(68, x))
        fill(x - 1, y, x + 2, y, "W")
    for bridge in (12, 40, 66):
        for y in range(bridge, bridge + 2):
            for xx in range(50, 76):
                if grid[y][xx] == "W":
                    grid[y][xx] = "."
    # Rock ridges with narrow passes on the west side.
    for y, gaps in ((20, (8, 30)), (52, (18, 44))):
        fill(4, y, 50, y + 1, "@")
        for g in gaps:
            fill(g, y, g + 1, y + 1, ".")
    # A canyon on the east side: two ridges, a one-cell pass.
    fill(80, 28, 82, 60, "@")
    fill(80, 44, 82, 44, ".")
    fill(100, 10, 102, 40, "@")
    fill(100, 18, 102, 19, ".")
    # A plateau walled all round: cut off from the rest.
    fill(104, 54, 122, 54, "@")
    fill(104, 72, 122, 72, "@")
    fill(104, 54, 104, 72, "@")
    fill(122, 54, 122, 72, "@")
    # Swamps (rough ground) and woods.
    for cx, cy, r in ((30, 34, 6), (90, 14, 5), (20, 66, 5), (112, 36, 4)):
        for y in range(cy - r, cy + r + 1):
            for x in range(cx - r, cx + r + 1):
                if (x - cx) ** 2 + (y - cy) ** 2 <= r * r + rng.randint(-3, 3):
                    if 0 < x < WIDTH - 1 and 0 < y < HEIGHT - 1 and grid[y][x] == ".":
                        grid[y][x] = "S"
    for _ in range(26):
        cx, cy = rng.randint(3, WIDTH - 4), rng.randint(3, HEIGHT - 4)
        for _ in range(rng.randint(4, 14)):
            x, y = cx + rng.randint(-3, 3), cy + rng.randint(-2, 2)
            if 0 < x < WIDTH - 1 and 0 < y < HEIGHT - 1 and grid[y][x] == ".":
                grid[y][x] = "T"
    # Keep the spawn fields open.
    for x0, y0 in ((6, 4), (6, 58), (84, 64)):
        for y in range(y0, y0 + 12):
            for x in range(x0, x0 + 14):
                if grid[y][x] == "T":
                    grid[y][x] = "."
    lines = ["type octile", f"height {HEIGHT}", f"width {WIDTH}", "map"]
    lines += ["".join(row) for row in grid]
    return "\n".join(lines) + "\n"


def tile(rng, kind):
    """One 16x16 tile as rows of (r, g, b, a)."""
    px = [[(0, 0, 0, 255)] * TILE for _ in range(TILE)]

    def jitter(base, amount):
        return tuple(max(0, min(255, c + rng.randint(-amount, amount))) for c in base) + (255,)

    for y in range(TILE):
        for x in range(TILE):
            if kind == "ground":
                px[y][x] = jitter((96, 140, 64), 14)
            elif kind == "swamp":
                px[y][x] = jitter((92, 104, 60), 10)
                if rng.random() < 0.18:
                    px[y][x] = jitter((52, 70, 58), 8)
            elif kind == "rock":
                shade = 120 - 4 * abs(y - 8) - 2 * abs(x - 8)
                px[y][x] = jitter((shade, shade - 4, shade - 10), 10)
                if x in (0, TILE - 1) or y in (0, TILE - 1):
                    px[y][x] = (60, 56, 52, 255)
            elif kind == "trees":
                px[y][x] = jitter((82, 124, 56), 10)
                for cx, cy in ((5, 5), (11, 7), (6, 12), (12, 13)):
                    if (x - cx) ** 2 + (y - cy) ** 2 <= 9:
                        px[y][x] = jitter((30, 80, 36), 12)
            elif kind == "water":
                px[y][x] = jitter((50, 96, 170), 8)
                if (y + (x // 4)) % 6 == 0:
                    px[y][x] = jitter((110, 160, 220), 10)
            elif kind == "mud":
                px[y][x] = jitter((104, 78, 50), 12)
                if rng.random() < 0.12:
                    px[y][x] = jitter((70, 50, 32), 8)
    return px


def unit_sprite(size, vehicle):
    """A unit seen from above, white (tinted with its team's colour in the
    game), facing +x: a disc the size of its body with a dark rim; infantry
    carry a dark wedge at the front, vehicles a turret and a barrel."""
    half = size / 2
    rim = max(1.5, size / 16)

    def shade(x, y):
        # Position relative to the centre, in pixels, y up.
        dx, dy = x - half, half - y
        r = (dx * dx + dy * dy) ** 0.5
        if r > half - 0.5:
            return None
        if r > half - 0.5 - rim:
            return (70, 70, 70)
        if vehicle:
            if abs(dy) < size * 0.07 and 0 < dx < half - 0.5:
                return (40, 40, 40)
            if r < size * 0.22:
                return (200, 200, 200)
            return (255, 255, 255)
        # A wedge from the centre to the front.
        if dx > 0 and abs(dy) < (half - dx) * 0.6 and dx > half * 0.25:
            return (45, 45, 45)
        return (255, 255, 255)

    rows = []
    for y in range(size):
        row = []
        for x in range(size):
            # 4x4 samples a pixel: smooth edges.
            samples = [shade(x + (i + 0.5) / 4, y + (j + 0.5) / 4) for i in range(4) for j in range(4)]
            inside = [c for c in samples if c is not None]
            if not inside:
                row.append((0, 0, 0, 0))
                continue
            colour = tuple(sum(c[k] for c in inside) // len(inside) for k in range(3))
            row.append(colour + (255 * len(inside) // len(samples),))
        rows.append(row)
    return rows


def write_png(path, rows):
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + b"".join(struct.pack("BBBB", *p) for p in row) for row in rows)

    def chunk(tag, data):
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    path.write_bytes(png)


def main():
    rng = random.Random(2026)
    (ROOT / "assets/maps").mkdir(parents=True, exist_ok=True)
    (ROOT / "assets/maps/frontier.map").write_text(make_map(rng))
    tiles = [tile(rng, k) for k in ("ground", "swamp", "rock", "trees", "water", "mud")]
    rows = [sum((t[y] for t in tiles), []) for y in range(TILE)]
    write_png(ROOT / "assets/tiles.png", rows)
    write_png(ROOT / "assets/infantry.png", unit_sprite(32, vehicle=False))
    write_png(ROOT / "assets/vehicle.png", unit_sprite(64, vehicle=True))


if __name__ == "__main__":
    main()
