//! Joining the JSONL files of a sweep's shards (or of any sweeps of one expansion): every point
//! once, from files whose expansions agree.

use super::shard::{SHARD_SPEC, ShardSpec};
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

/// The shard description beside `jsonl`, if there is one.
fn shard_spec(jsonl: &Path) -> Result<Option<ShardSpec>> {
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

/// Reads every input, refusing a point measured twice and shards of different expansions; says
/// which shards of N are missing and which lines it skipped.
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
        if let Some(s) = shard_spec(path)? {
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
        let loaded = store::read(path)?;
        for s in &loaded.skipped {
            warnings.push(format!("{}: {s}", path.display()));
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
    use crate::commands::sweep::shard::Shard;
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
}
