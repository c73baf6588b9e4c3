//! The pipeline model: from per-tile copy and compute times (measured by builds that keep one
//! stage only), predict a block's time for m tiles, sequentially and through an S-slot ring, and
//! compare with measurement. Departures past a threshold mean the stages are not independent here.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Per-tile stage times of one block (any unit, used consistently).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    pub copy: f64,
    pub compute: f64,
}

/// Sequential: every tile copies, then computes.
pub fn sequential(t: StageTimes, m: usize) -> f64 {
    m as f64 * (t.copy + t.compute)
}

/// Pipelined, closed form: fill (one copy) + m x the slower stage + drain (one compute) ... minus
/// the one tile that fill and drain already count: t_copy + (m - 1) max + t_compute.
pub fn pipelined(t: StageTimes, m: usize) -> f64 {
    if m == 0 {
        return 0.0;
    }
    t.copy + (m - 1) as f64 * t.copy.max(t.compute) + t.compute
}

/// The most tiles per block the model takes: the kernels count tiles in 32-bit ints.
pub const MAX_TILES_PER_BLOCK: usize = i32::MAX as usize;
/// The most slots the model takes, as the sweep's stages axis.
pub const MAX_SLOTS: usize = 8;

/// Why the model cannot take a point of `stages` slots and `tiles_per_block` tiles, if it cannot.
pub fn refusal(stages: usize, tiles_per_block: usize) -> Option<String> {
    if !(1..=MAX_SLOTS).contains(&stages) {
        Some(format!("stages {stages} (allowed: 1..={MAX_SLOTS})"))
    } else if tiles_per_block > MAX_TILES_PER_BLOCK {
        Some(format!(
            "tiles_per_block {tiles_per_block} (allowed: 0..={MAX_TILES_PER_BLOCK}, the kernels' 32-bit tile count)"
        ))
    } else {
        None
    }
}

/// Discrete-event simulation of an S-slot ring: the copy of tile k starts once its slot is free
/// (tile k - S released) and the previous copy finished (copies share one path); compute of
/// tile k starts once its copy landed and tile k - 1 was computed; the slot is released when its
/// compute ends. Returns when the last compute ends. Holds the last S compute ends only, so its
/// memory does not grow with m.
pub fn simulate(t: StageTimes, m: usize, slots: usize) -> f64 {
    assert!(slots >= 1);
    let mut ends: VecDeque<f64> = VecDeque::with_capacity(slots.min(m));
    let (mut last_copy, mut last_end) = (0.0f64, 0.0f64);
    for _ in 0..m {
        // S tiles back, this tile's slot was released when that tile's compute ended
        let slot_free = if ends.len() == slots {
            ends.pop_front()
        } else {
            None
        };
        let start = slot_free.unwrap_or(0.0).max(last_copy);
        last_copy = start + t.copy;
        last_end = last_copy.max(last_end) + t.compute;
        ends.push_back(last_end);
    }
    last_end
}

/// One variant at one tile count: what the model predicted and what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub variant: String,
    pub stages: usize,
    pub tiles_per_block: usize,
    pub predicted: f64,
    pub simulated: f64,
    pub measured: f64,
    /// measured / predicted - 1.
    pub departure: f64,
    pub fit: Fit,
}

/// How a measurement stands against the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fit {
    /// Within `THRESHOLD` of the prediction.
    Within,
    /// Departs past `THRESHOLD`: flagged and explained.
    Departs,
    /// No finite departure (a zero or non-finite prediction or measurement): neither within
    /// tolerance nor a departure, since nothing was compared.
    NotComparable,
}

impl Fit {
    /// NaN compares false with everything, so `|NaN| > threshold` would pass it as within:
    /// finiteness is settled first.
    pub fn of(departure: f64) -> Fit {
        if !departure.is_finite() {
            Fit::NotComparable
        } else if departure.abs() > THRESHOLD {
            Fit::Departs
        } else {
            Fit::Within
        }
    }
}

/// Departures past this fraction are flagged.
pub const THRESHOLD: f64 = 0.15;

pub fn compare(variant: &str, stages: usize, t: StageTimes, m: usize, measured: f64) -> Comparison {
    let predicted = if stages <= 1 {
        sequential(t, m)
    } else {
        pipelined(t, m)
    };
    let departure = measured / predicted - 1.0;
    Comparison {
        variant: variant.to_string(),
        stages,
        tiles_per_block: m,
        predicted,
        simulated: simulate(t, m, stages.max(1)),
        measured,
        departure,
        fit: Fit::of(departure),
    }
}

/// Why a flagged departure happens, in the direction it went.
pub fn explain(c: &Comparison, t: StageTimes) -> String {
    match c.fit {
        Fit::Within => return "within 15%".into(),
        Fit::NotComparable => {
            return format!(
                "not comparable: measured {} against predicted {} (copy {} and compute {} per tile) gives no finite departure",
                c.measured, c.predicted, t.copy, t.compute
            );
        }
        Fit::Departs => {}
    }
    if c.departure > 0.0 && c.tiles_per_block < 8 {
        return "few tiles per block: launch latency and the first copy's full latency dominate, which per-tile stage times do not carry".into();
    }
    if c.departure > 0.0 {
        let serial = sequential(t, c.tiles_per_block);
        let near_serial = (c.measured / serial - 1.0).abs() <= THRESHOLD;
        format!(
            "slower than max(t_copy, t_compute) = {:.3} per tile{}: copy and compute contend (device-memory bandwidth shared by the copy's reads and the compute stage's output writes, issue slots, shared-memory ports), so the stages are not independent here",
            t.copy.max(t.compute),
            if near_serial {
                format!(
                    " and within 15% of the sequential sum {:.3} (measured/sum {:+.1}%)",
                    serial,
                    (c.measured / serial - 1.0) * 100.0
                )
            } else {
                String::new()
            }
        )
    } else {
        "faster than the model: per-block stage times measured with a different residency overstate the cost here, or other resident blocks on the SM overlap this block's stages".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: StageTimes = StageTimes {
        copy: 3.0,
        compute: 2.0,
    };

    #[test]
    fn closed_forms_by_hand() {
        assert_eq!(sequential(T, 4), 20.0);
        // 3 + 3 x 3 + 2
        assert_eq!(pipelined(T, 4), 14.0);
        assert_eq!(pipelined(T, 1), 5.0);
        assert_eq!(pipelined(T, 0), 0.0);
    }

    #[test]
    fn one_slot_simulates_the_sequential_loop() {
        for m in [1, 2, 7] {
            assert_eq!(simulate(T, m, 1), sequential(T, m));
        }
    }

    #[test]
    fn two_slots_reach_the_slower_stage() {
        // copy-bound: copies back to back, the last compute after: 4 x 3 + 2
        assert_eq!(simulate(T, 4, 2), 14.0);
        assert_eq!(simulate(T, 4, 2), pipelined(T, 4));
        // compute-bound: 3 + 4 x 5 when copy 3, compute 5
        let c = StageTimes {
            copy: 3.0,
            compute: 5.0,
        };
        assert_eq!(simulate(c, 4, 2), 23.0);
        assert_eq!(pipelined(c, 4), 23.0);
        // more slots do not beat the slower stage
        assert_eq!(simulate(c, 4, 4), 23.0);
    }

    #[test]
    fn points_beyond_what_the_model_takes_are_refused() {
        assert_eq!(refusal(2, 4), None);
        assert_eq!(refusal(1, MAX_TILES_PER_BLOCK), None);
        let why = refusal(2, 1_000_000_000_000_000).unwrap();
        assert!(
            why.contains("tiles_per_block 1000000000000000 (allowed: 0..=2147483647"),
            "{why}"
        );
        assert!(refusal(0, 4).unwrap().contains("allowed: 1..=8"));
        assert!(refusal(4_000_000_000, 4).is_some());
        // a long simulation holds S ends only, and agrees with the closed form
        assert_eq!(simulate(T, 1 << 20, 2), pipelined(T, 1 << 20));
    }

    #[test]
    fn departures_are_flagged_past_fifteen_percent() {
        let ok = compare("x", 2, T, 4, 15.0);
        assert_eq!(ok.fit, Fit::Within);
        assert!((ok.departure - (15.0 / 14.0 - 1.0)).abs() < 1e-12);
        let slow = compare("x", 2, T, 4, 17.0);
        assert!(slow.fit == Fit::Departs && explain(&slow, T).contains("launch latency"));
        let slow_many = compare("x", 2, T, 40, 1.2 * pipelined(T, 40));
        let why = explain(&slow_many, T);
        assert!(slow_many.fit == Fit::Departs && why.contains("contend"));
        assert!(!why.contains("sequential sum"), "{why}");
        // measured at the sequential sum (200 for 40 tiles): named as such
        let serial = compare("x", 2, T, 40, 195.0);
        let why = explain(&serial, T);
        assert!(
            why.contains("within 15% of the sequential sum 200.000 (measured/sum -2.5%)"),
            "{why}"
        );
        let fast = compare("sync", 1, T, 4, 12.0);
        assert_eq!(fast.predicted, 20.0);
        assert!(fast.fit == Fit::Departs && explain(&fast, T).contains("resident blocks"));
    }

    #[test]
    fn no_finite_departure_is_never_within_tolerance() {
        let zero = StageTimes {
            copy: 0.0,
            compute: 0.0,
        };
        // 0 / 0, x / 0, NaN and infinite measurements
        for (t, m, measured) in [
            (zero, 4, 0.0),
            (zero, 4, 1.0),
            (T, 0, 1.0),
            (T, 4, f64::NAN),
            (T, 4, f64::INFINITY),
            (
                StageTimes {
                    copy: f64::NAN,
                    compute: 2.0,
                },
                4,
                14.0,
            ),
        ] {
            let c = compare("x", 2, t, m, measured);
            assert_eq!(c.fit, Fit::NotComparable, "{t:?} {m} {measured}");
            let why = explain(&c, t);
            assert!(
                why.starts_with("not comparable") && !why.contains("within"),
                "{why}"
            );
        }
        assert_eq!(Fit::of(f64::NAN), Fit::NotComparable);
        assert_eq!(Fit::of(-0.15), Fit::Within);
        assert_eq!(Fit::of(0.1500001), Fit::Departs);
    }
}
