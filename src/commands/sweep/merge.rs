//! Joining the JSONL files of a sweep's shards (or of any sweeps of one expansion): every point
//! once, from files whose expansions agree.

use super::shard::{ShardSpec, spec_beside};
use crate::results::sweep::Record;
use crate::results::sweep_store as store;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The joined records, in the order of the inputs, and what a reader should know.
#[derive(Debug)]
pub struct Merged {
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
}

/// The points of one input, refused (a bad input, before anything is written) where it cannot be
/// read or holds no sweep point, naming what it is where that can be told.
fn points_of(path: &Path) -> Result<store::Loaded> {
    let bad = |why: String| {
        Error::InvalidArgument(format!(
            "{}: {why}; merge takes the sweep.jsonl files of a sweep's shards",
            path.display()
        ))
    };
    let loaded = store::read(path).map_err(|e| bad(e.to_string()))?;
    if !loaded.records.is_empty() {
        return Ok(loaded);
    }
    let kind = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            if v.get("schema_version").is_some() && v.get("variants").is_some() {
                Some(" (it is a run's results.json: `tilepipe report` reads it)")
            } else if v.get("tests").is_some() {
                Some(" (it is a suite's check.json)")
            } else {
                None
            }
        })
        .unwrap_or("");
    Err(bad(match loaded.lines {
        0 => "empty".to_string(),
        n => format!("none of its {n} lines is a sweep point{kind}"),
    }))
}

/// Reads every input, refusing one that is not a sweep's, points of different workloads, a point
/// measured twice and shards of different expansions; says which shards of N are missing and which
/// lines it skipped.
pub fn merge(inputs: &[PathBuf]) -> Result<Merged> {
    if inputs.is_empty() {
        return Err(Error::InvalidArgument(
            "merge needs at least one sweep.jsonl".into(),
        ));
    }
    let mut warnings = Vec::new();
    let mut records = Vec::new();
    let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
    let mut specs: Vec<(ShardSpec, &Path)> = Vec::new();
    for path in inputs {
        if let Some(s) = spec_beside(path)? {
            if let Some((first, at)) = specs.first() {
                let same = ShardSpec {
                    shard: first.shard,
                    ..s.clone()
                };
                if &same != first || s.shard.count != first.shard.count {
                    return Err(Error::InvalidArgument(format!(
                        "{} and {} are shards of different sweeps (axes, peers, problem, seed, workload or shard count differ): merge refuses to mix them",
                        at.display(),
                        path.display()
                    )));
                }
            }
            specs.push((s, path));
        }
        let loaded = points_of(path)?;
        for s in &loaded.skipped {
            warnings.push(format!("{}: {s}", path.display()));
        }
        if let Some((first, at)) = records.first().map(|r: &Record| (r, &seen[&r.key]))
            && let Some(other) = loaded.records.iter().find(|r| r.workload != first.workload)
        {
            return Err(Error::InvalidArgument(format!(
                "{} holds {} points and {} {} points: merge joins the shards of one sweep",
                at.display(),
                first.workload,
                path.display(),
                other.workload
            )));
        }
        for r in loaded.records {
            if let Some(other) = seen.insert(r.key.clone(), path) {
                return Err(Error::InvalidArgument(format!(
                    "point {} is in both {} and {}: shards must not overlap",
                    r.key,
                    other.display(),
                    path.display()
                )));
            }
            records.push(r);
        }
    }
    if let Some((first, _)) = specs.first() {
        let n = first.shard.count;
        let missing: Vec<String> = (0..n)
            .filter(|i| !specs.iter().any(|(s, _)| s.shard.index == *i))
            .map(|i| format!("{i}/{n}"))
            .collect();
        if !missing.is_empty() {
            warnings.push(format!("shards not given: {}", missing.join(", ")));
        }
    }
    Ok(Merged { records, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::sweep::SweepSpec;
    use crate::commands::sweep::shard::{SHARD_SPEC, Shard};
    use crate::results::sweep::tests::record;
    use crate::results::sweep_store::append;
    use crate::workload::rmsnorm::RmsNorm;
    use crate::workload::rows::Rows;

    fn shard_dir(root: &Path, name: &str, index: usize, count: usize, seed: u64) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let spec = ShardSpec {
            workload: "rmsnorm".into(),
            spec: SweepSpec::default_for(&Rows(&RmsNorm)),
            problem: "bf16 h4096".into(),
            seed,
            shard: Shard { index, count },
        };
        std::fs::write(dir.join(SHARD_SPEC), serde_json::to_string(&spec).unwrap()).unwrap();
        dir.join("sweep.jsonl")
    }

    #[test]
    fn shards_join_and_overlaps_or_mismatches_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let a = shard_dir(root.path(), "a", 0, 3, 1);
        let b = shard_dir(root.path(), "b", 1, 3, 1);
        append(&a, &record("sync", 0, 1, 4, 1.0)).unwrap();
        append(&b, &record("sync", 0, 1, 16, 2.0)).unwrap();
        let m = merge(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(m.records.len(), 2);
        assert_eq!(m.warnings, ["shards not given: 2/3"]);

        let c = shard_dir(root.path(), "c", 2, 3, 1);
        append(&c, &record("sync", 0, 1, 16, 3.0)).unwrap();
        let e = merge(&[a.clone(), b.clone(), c]).unwrap_err().to_string();
        assert!(e.contains("is in both") && e.contains("t16"), "{e}");

        let d = shard_dir(root.path(), "d", 2, 3, 2);
        append(&d, &record("sync", 0, 1, 64, 3.0)).unwrap();
        let e = merge(&[a, b, d]).unwrap_err().to_string();
        assert!(e.contains("different sweeps"), "{e}");
        assert!(merge(&[]).is_err());
    }

    #[test]
    fn inputs_that_are_not_one_sweeps_points_are_refused_naming_what_they_are() {
        let root = tempfile::tempdir().unwrap();
        let a = shard_dir(root.path(), "a", 0, 2, 1);
        append(&a, &record("sync", 0, 1, 4, 1.0)).unwrap();
        let refused = |other: &Path| match merge(&[a.clone(), other.to_path_buf()]) {
            Err(Error::InvalidArgument(why)) => why,
            got => panic!("{got:?}"),
        };
        let empty = root.path().join("empty.jsonl");
        std::fs::write(&empty, "").unwrap();
        assert!(refused(&empty).contains("empty.jsonl: empty"));
        let garbage = root.path().join("garbage.jsonl");
        std::fs::write(&garbage, "not json\n{}\n").unwrap();
        assert!(refused(&garbage).contains("none of its 2 lines is a sweep point"));
        let run = root.path().join("results.json");
        std::fs::write(&run, r#"{"schema_version": 2, "variants": []}"#).unwrap();
        assert!(refused(&run).contains("results.json: `tilepipe report` reads it"));
        let missing = refused(&root.path().join("nowhere.jsonl"));
        assert!(missing.contains("nowhere.jsonl") && missing.contains("sweep.jsonl files"));
        let gemm = root.path().join("gemm.jsonl");
        let mut g = record("sync", 0, 1, 4, 1.0);
        g.workload = "gemm".into();
        g.key = "gemm-point".into();
        append(&gemm, &g).unwrap();
        let why = refused(&gemm);
        assert!(
            why.contains("rmsnorm points") && why.contains("gemm points"),
            "{why}"
        );
        // the good input alone still merges
        assert_eq!(merge(&[a]).unwrap().records.len(), 1);
    }
}
