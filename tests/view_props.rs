//! Property tests of the checks every user value passes before any GPU work: a view of any sizes
//! (zeros, usize::MAX, products just past 64 bits) is accepted or refused with a reason, never
//! panics or wraps, and an accepted view's extent and bytes fit; the same for tile heights.

use proptest::prelude::*;
use tilepipe::dtype::DType;
use tilepipe::meminfo;
use tilepipe::workload::rows::BuildConfig;
use tilepipe::workload::rows::View;

/// Sizes that sit on the edges: 0, 1, i32::MAX, powers of two either side of overflow, MAX.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1),
        Just(8),
        Just(i32::MAX as usize),
        Just(i32::MAX as usize + 1),
        Just(usize::MAX),
        Just(usize::MAX / 2),
        Just(usize::MAX / 4 + 1),
        (0u32..64).prop_map(|b| 1usize << b),
        (0u32..64).prop_map(|b| (1usize << b).wrapping_sub(1)),
        0usize..100_000,
        any::<usize>(),
    ]
}

fn dtype() -> impl Strategy<Value = DType> {
    prop_oneof![Just(DType::F32), Just(DType::F16), Just(DType::Bf16)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn any_view_is_accepted_within_bounds_or_refused_with_a_reason(
        tokens in size(),
        hidden in size(),
        stride in proptest::option::of(size()),
        offset in size(),
        alloc in proptest::option::of(size()),
        dt in dtype(),
    ) {
        match View::new(tokens, hidden, stride, offset, alloc, dt) {
            Ok(v) => {
                let extent = View::checked_extent(v.tokens, v.hidden, v.row_stride, v.offset);
                prop_assert!(extent.is_some_and(|e| e <= v.alloc), "{v:?}");
                prop_assert!(v.tokens >= 1 && v.tokens <= View::MAX_TOKENS);
                prop_assert!(v.row_stride >= v.hidden);
                prop_assert_eq!(v.hidden % (16 / dt.size()), 0);
                let es = dt.size() as u128;
                let host = (v.alloc as u128 + 2 * v.tokens as u128 * v.hidden as u128) * es;
                prop_assert!(host <= usize::MAX as u128, "{v:?}");
                prop_assert_eq!(v.host_bytes(dt) as u128, host);
                // the last element of the last row lies inside the allocation
                prop_assert!(v.index(v.tokens - 1, v.hidden - 1) < v.alloc);
                prop_assert!(v.bytes_moved(dt) > 0);
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("invalid shape: ") && msg.contains("allowed"), "{msg}");
            }
        }
    }

    #[test]
    fn host_memory_is_refused_past_what_is_available(
        tokens in 1usize..100_000,
        hidden in (1usize..512).prop_map(|k| 8 * k),
        avail in any::<u64>(),
        dt in dtype(),
    ) {
        let v = View::new(tokens, hidden, None, 0, None, dt).unwrap();
        let r = meminfo::check("the view", v.host_bytes(dt), Some(avail));
        prop_assert_eq!(r.is_ok(), v.host_bytes(dt) <= avail);
        prop_assert!(meminfo::check("the view", v.host_bytes(dt), None).is_ok());
    }

    #[test]
    fn any_tile_height_is_accepted_within_a_slot_or_refused(
        hidden in size(),
        rows in proptest::option::of(size()),
        dt in dtype(),
    ) {
        match BuildConfig::checked(dt, hidden, rows) {
            Ok(c) => {
                prop_assert!(c.tile_rows >= 1);
                let slot = (c.tile_rows as u128) * (hidden as u128) * dt.size() as u128;
                prop_assert!(slot <= 227 * 1024, "{c:?}");
                prop_assert!(c.slot_bytes() as u128 >= slot);
            }
            Err(e) => prop_assert!(e.to_string().contains("allowed: "), "{e}"),
        }
    }
}
