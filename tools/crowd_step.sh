# Sourced by the callgrind tools: SYS holds a --toggle-collect option for
# each of the crowd step's systems (collecting inside them is collecting
# the step).
P='bevy_frontier::movement::'
SYS=()
for f in begin_orders adopt_paths replan_cut_paths replan_cut_routes prefer::prefer \
    passage::take_turns avoidance::avoid walk::move_units avoidance::separate; do
    SYS+=("--toggle-collect=$P$f")
done
