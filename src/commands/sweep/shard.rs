//! Shards: the same expansion of axes on every machine, split into N disjoint parts by a stable
//! hash of each point's key, so that `sweep --shard I/N` can run as one task of a Slurm array or a
//! Ray loop, and `merge` can join the parts.

use super::SweepSpec;
use crate::pipeline::Variant;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

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

/// The shard description beside `jsonl`, if there is one.
pub fn spec_beside(jsonl: &Path) -> Result<Option<ShardSpec>> {
    let path = jsonl.with_file_name(SHARD_SPEC);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Format {
                path,
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Refuses to let shard `new` write its description beside `jsonl` over one of another sweep or
/// shard whose points are there: those points would pass for this shard's. Changes nothing.
pub fn can_write_spec(jsonl: &Path, new: &ShardSpec) -> Result<()> {
    if !jsonl.exists() {
        return Ok(());
    }
    let old = spec_beside(jsonl).map_err(|e| {
        Error::InvalidArgument(format!(
            "{e}; it is not the description of a shard of this tilepipe (allowed: --out a folder \
             of this sweep's shard, or a new one)"
        ))
    })?;
    let Some(old) = old else { return Ok(()) };
    let differ: Vec<String> = [
        (
            "workload",
            old.workload != new.workload,
            format!("{} against {}", old.workload, new.workload),
        ),
        ("axes", old.spec != new.spec, "their expansions".into()),
        (
            "problem",
            old.problem != new.problem,
            format!("{} against {}", old.problem, new.problem),
        ),
        (
            "seed",
            old.seed != new.seed,
            format!("{} against {}", old.seed, new.seed),
        ),
        (
            "shard",
            old.shard != new.shard,
            format!(
                "{}/{} against {}/{}",
                old.shard.index, old.shard.count, new.shard.index, new.shard.count
            ),
        ),
    ]
    .into_iter()
    .filter(|(_, differs, _)| *differs)
    .map(|(what, _, how)| format!("{what} ({how})"))
    .collect();
    match differ.is_empty() {
        true => Ok(()),
        false => Err(Error::InvalidArgument(format!(
            "{} describes another shard than this one, and its points are in {}: they differ in {}; \
             allowed: the same axes, problem, seed and shard (with --resume), or another --out",
            jsonl.with_file_name(SHARD_SPEC).display(),
            jsonl.display(),
            differ.join(", ")
        ))),
    }
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

    /// A shard's description is never replaced by another's while its points are beside it, and
    /// judging it changes no byte.
    #[test]
    fn another_shards_description_beside_its_points_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let jsonl = d.path().join("sweep.jsonl");
        let spec = |index: usize, seed: u64| ShardSpec {
            workload: "rmsnorm".into(),
            spec: SweepSpec::default_for(&W),
            problem: "4096 wide".into(),
            seed,
            shard: Shard { index, count: 2 },
        };
        // nothing there yet: any shard may start
        can_write_spec(&jsonl, &spec(1, 9)).unwrap();
        let text = serde_json::to_string_pretty(&spec(0, 1)).unwrap();
        std::fs::write(jsonl.with_file_name(SHARD_SPEC), &text).unwrap();
        // a description without points is a sweep not begun
        can_write_spec(&jsonl, &spec(1, 9)).unwrap();
        std::fs::write(&jsonl, "{}\n").unwrap();
        can_write_spec(&jsonl, &spec(0, 1)).unwrap();
        let e = can_write_spec(&jsonl, &spec(1, 9)).unwrap_err().to_string();
        assert!(
            e.contains("seed (1 against 9)") && e.contains("shard (0/2 against 1/2)"),
            "{e}"
        );
        assert!(!e.contains("workload"), "{e}");
        std::fs::write(jsonl.with_file_name(SHARD_SPEC), "not json").unwrap();
        let e = can_write_spec(&jsonl, &spec(0, 1)).unwrap_err().to_string();
        assert!(e.contains("not the description of a shard"), "{e}");
        assert_eq!(std::fs::read(&jsonl).unwrap(), b"{}\n");
    }
}
