//! The indexed heap pops the same keys as `std::collections::BinaryHeap`
//! under random pushes, pops and decrease-keys.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use bevy_frontier::core::IndexedHeap;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Push(u32, u32),
    Pop,
    Decrease(u32, u32),
}

fn op() -> impl Strategy<Value = Op> {
    const ITEMS: u32 = 48;
    prop_oneof![
        3 => (0..ITEMS, 0..1000u32).prop_map(|(i, k)| Op::Push(i, k)),
        2 => Just(Op::Pop),
        2 => (0..ITEMS, 0..1000u32).prop_map(|(i, k)| Op::Decrease(i, k)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Keys carry their item as a tie-breaker, so the pop order is fully
    /// determined and both heaps must agree item for item.
    #[test]
    fn behaves_like_std_binary_heap(ops in prop::collection::vec(op(), 1..400)) {
        let mut heap = IndexedHeap::with_capacity(48);
        // The model: std's heap with lazy deletion, plus each item's live key.
        let mut model: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
        let mut live: HashMap<u32, u32> = HashMap::new();

        for op in ops {
            match op {
                Op::Push(item, key) => {
                    let pushed = heap.push(item, (key, item));
                    prop_assert_eq!(pushed, !live.contains_key(&item));
                    if pushed {
                        live.insert(item, key);
                        model.push(Reverse((key, item)));
                    }
                }
                Op::Decrease(item, key) => {
                    let lowered = heap.decrease_key(item, (key, item));
                    let expected = live.get(&item).is_some_and(|&old| key < old);
                    prop_assert_eq!(lowered, expected);
                    if lowered {
                        live.insert(item, key);
                        model.push(Reverse((key, item)));
                    }
                }
                Op::Pop => {
                    // Drop entries superseded by a decrease-key.
                    while let Some(&Reverse((key, item))) = model.peek() {
                        if live.get(&item) == Some(&key) {
                            break;
                        }
                        model.pop();
                    }
                    let expected = model.pop().map(|Reverse(entry)| entry);
                    let got = heap.pop().map(|(key, _)| key);
                    prop_assert_eq!(got, expected);
                    if let Some((_, item)) = got {
                        live.remove(&item);
                    }
                }
            }
            prop_assert_eq!(heap.len(), live.len());
            for (&item, &key) in &live {
                prop_assert!(heap.contains(item));
                prop_assert_eq!(heap.key(item), Some((key, item)));
            }
            let smallest = live.iter().map(|(&i, &k)| (k, i)).min();
            prop_assert_eq!(heap.peek().map(|(key, _)| key), smallest);
        }
    }
}
