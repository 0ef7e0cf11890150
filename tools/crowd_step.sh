# Sourced by the callgrind tools: SYS holds a --toggle-collect option for
# each of the crowd step's systems (collecting inside them is collecting
# the step).
P='bevy_frontier::movement::'
SYS=()
for f in orders::begin_orders orders::adopt_paths orders::replan_cut_paths orders::replan_cut_routes \
    prefer::prefer passage::take_turns avoidance::avoid walk::move_units separate::separate; do
    SYS+=("--toggle-collect=$P$f")
done
