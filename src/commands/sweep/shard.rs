//! Shards: the same expansion of axes on every machine, split into N disjoint parts by a stable
//! hash of each point's key, so that `sweep --shard I/N` can run as one task of a Slurm array or a
//! Ray loop, and `merge` can join the parts.

use super::SweepSpec;
use crate::pipeline::Variant;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based, below `count`.
    pub index: usize,
    pub count: usize,
}

/// The most shards a sweep may be split into.
pub const MAX_SHARDS: usize = 65536;

impl std::str::FromStr for Shard {
    type Err = Error;

    /// "I/N" with 0 <= I < N (a Slurm array's $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT).
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            Error::InvalidArgument(format!(
                "--shard {s}: allowed: I/N with 0 <= I < N <= {MAX_SHARDS}, e.g. 0/4"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether the point `key` is this shard's: FNV-1a of the key, modulo the count (stable across
    /// machines, processes and Rust versions, unlike the standard hasher).
    pub fn owns(&self, key: &str) -> bool {
        let h = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        (h % self.count as u64) as usize == self.index
    }
}

/// The variants worker `w` of `sweep --devices` measures: every count-th from its index, so each
/// GPU measures whole variants (and worker 0 the baseline's compute-only probe too).
pub fn workers_variants<S>(variants: Vec<Variant<S>>, w: Option<Shard>) -> Vec<Variant<S>> {
    variants
        .into_iter()
        .enumerate()
        .filter(|(j, _)| w.is_none_or(|w| j % w.count == w.index))
        .map(|(_, v)| v)
        .collect()
}

/// The file a sharded sweep writes beside its sweep.jsonl.
pub const SHARD_SPEC: &str = "sweep.spec.json";

/// What a sharded sweep writes beside its JSONL, for `merge` to compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardSpec {
    pub workload: String,
    pub spec: SweepSpec,
    /// The problem the command line described, in words.
    pub problem: String,
    pub seed: u64,
    pub shard: Shard,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::sweep::SweepOptions;
    use crate::dtype::DType;
    use crate::results::sweep::key;
    use crate::workload::rmsnorm::RmsNorm;
    use crate::workload::rows::{RowProblem, Rows, View};
    use proptest::prelude::*;

    const W: Rows = Rows(&RmsNorm);

    fn opts(spec: SweepSpec) -> SweepOptions<RowProblem> {
        let view = View::new(1, 4096, None, 0, None, DType::Bf16).unwrap();
        SweepOptions {
            spec,
            base: RowProblem::new(view, DType::Bf16, None),
            seed: 1,
            jsonl: "sweep.jsonl".into(),
            resume: false,
            timing: Default::default(),
            shard: None,
            worker: None,
            torch_python: None,
        }
    }

    #[test]
    fn a_shard_is_i_of_n() {
        assert_eq!(
            "1/4".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 4 }
        );
        for bad in ["4/4", "1/0", "x/2", "1", "-1/2", "0/70000"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("allowed: I/N"), "{bad}: {e}");
        }
    }

    proptest! {
        /// Every point of every expansion is in exactly one of N shards, for any N.
        #[test]
        fn shards_cover_every_point_once(
            count in 1usize..24,
            stages in proptest::collection::vec(1u32..7, 1..4),
            tiles in proptest::collection::vec(1usize..100_000, 1..6),
            probes: bool,
        ) {
            let spec = SweepSpec { stages, sizes: tiles, probes, ..SweepSpec::default_for(&W) };
            let all = super::super::measure::keys(&W, &opts(spec)).unwrap();
            for k in &all {
                let owners = (0..count).filter(|&i| Shard { index: i, count }.owns(k)).count();
                prop_assert_eq!(owners, 1, "{}", k);
            }
        }
    }

    #[test]
    fn workers_split_the_variants_whole_and_disjoint() {
        let spec = SweepSpec::default_for(&W);
        let all = spec.variants(&W, DType::Bf16);
        let parts: Vec<Vec<String>> = (0..3)
            .map(|index| {
                workers_variants(all.clone(), Some(Shard { index, count: 3 }))
                    .into_iter()
                    .map(|v| v.name)
                    .collect()
            })
            .collect();
        let mut joined: Vec<String> = parts.concat();
        joined.sort();
        let mut want: Vec<String> = all.iter().map(|v| v.name.clone()).collect();
        want.sort();
        assert_eq!(joined, want);
        assert!(parts.iter().all(|p| !p.is_empty()));
        assert_eq!(workers_variants(all.clone(), None).len(), all.len());
    }

    #[test]
    fn points_are_the_keys_a_sweep_writes() {
        let spec = SweepSpec {
            sizes: vec![16, 4],
            ..SweepSpec::default_for(&W)
        };
        let variants = spec.variants(&W, DType::Bf16).len();
        let p = super::super::measure::keys(&W, &opts(spec)).unwrap();
        // (variants whole + variants copy-only + 1 compute-only) per tile count
        assert_eq!(p.len(), 2 * (2 * variants + 1));
        assert_eq!(p[0], key("sync", 0, DType::Bf16, "h4096|r2|t4"));
        assert!(p.iter().any(|k| k.starts_with("sync|only2|")));
    }
}
