//! The torch peers at every tile count of a sweep (`sweep --peers torch`): the same rows, dtype and
//! seed as tilepipe's points, validated against the f64 reference before they are timed, each
//! that passed appended as a point of its own (no mechanism, no stages: a line of the time and
//! bandwidth plots, never of the speedup plot or the model).

use super::{PointId, Provenance, Record, SweepOptions, append, key};
use crate::Result;
use crate::clocks::ClockSample;
use crate::dtype::DType;
use crate::harness::{Harness, rotation_sets};
use crate::peers::{self, PEER_NAMES, TorchRequest};
use crate::progress::Progress;
use crate::report::Status;
use crate::report::peer::Peer;
use crate::workload::{HostData, View, Workload};
use std::collections::BTreeSet;
use std::path::Path;

/// "GPU 0: NVIDIA H200 (GPU-...)": the GPU a point was measured on.
pub fn gpu_of(h: &Harness) -> String {
    let i = h.info();
    format!("GPU {}: {} ({})", i.ordinal, i.name, i.uuid)
}

/// What the peers need of the GPU the sweep runs on (nothing that needs the GPU itself).
pub struct Context<'a> {
    pub workload: &'static dyn Workload,
    pub device: usize,
    pub l2_bytes: usize,
    /// The GPU, as every point names it.
    pub gpu: String,
    pub progress: &'a Progress,
    /// The GPU's clocks, read around and during each peer's timing.
    pub clock: Box<dyn Fn() -> Option<ClockSample> + 'a>,
}

impl<'a> Context<'a> {
    pub fn of(h: &'a Harness) -> Context<'a> {
        Context {
            workload: h.workload,
            device: h.info().ordinal,
            l2_bytes: h.info().l2_bytes as usize,
            gpu: gpu_of(h),
            progress: &h.progress,
            clock: Box::new(|| h.clock()),
        }
    }
}

/// One row tile height of one dtype: what the peers are run on.
pub struct Slice<'a> {
    pub dtype: DType,
    pub tile_rows: usize,
    /// Sorted tile counts.
    pub tiles: &'a [usize],
    pub ceiling_gbps: f64,
}

/// Runs the peers at each tile count whose points this process owns and has not measured yet,
/// appending each timed peer to the sweep and to `records`; a peer that failed, could not run or
/// was not timed is a note with its reason, not a point.
pub fn measure(
    h: &Context,
    o: &SweepOptions,
    python: &Path,
    s: &Slice,
    done: &BTreeSet<String>,
    records: &mut Vec<Record>,
) -> Result<()> {
    for &n in s.tiles {
        crate::interrupt::check()?;
        let key_of = |name: &str| key(name, 0, s.dtype, o.hidden, s.tile_rows, n);
        let wanted = |k: &String| !done.contains(k) && o.shard.is_none_or(|sh| sh.owns(k));
        if !PEER_NAMES.iter().map(|p| key_of(p)).any(|k| wanted(&k)) {
            continue;
        }
        h.progress.note(&format!(
            "torch peers at {n} tiles of {} {} rows",
            s.tile_rows, s.dtype
        ));
        let view = View::new(n * s.tile_rows, o.hidden, None, 0, None, s.dtype)?;
        let data = HostData::generate(h.workload, view, s.dtype, o.seed);
        let set_bytes = 2 * view.elements() * s.dtype.size();
        let sync_ms = records
            .iter()
            .find(|r| {
                r.variant == "sync"
                    && r.only == 0
                    && (r.dtype, r.hidden, r.tile_rows, r.tiles)
                        == (s.dtype, o.hidden, s.tile_rows, n)
            })
            .map(|r| r.median_ms);
        let req = TorchRequest {
            python: python.to_path_buf(),
            device: h.device,
            workload: h.workload.name(),
            eps: h.workload.eps(),
            buffer_sets: rotation_sets(h.l2_bytes, set_bytes),
            timing: o.timing,
            ceiling_gbps: Some(s.ceiling_gbps),
            baseline_ms: sync_ms,
        };
        for p in peers::torch(&req, &data, s.tile_rows, &*h.clock) {
            let k = key_of(&p.name);
            match point(&p, &data, s, k.clone(), h.gpu.clone()) {
                Ok(rec) if wanted(&k) => {
                    append(&o.jsonl, &rec)?;
                    records.push(rec);
                }
                Ok(_) => {}
                Err(why) => h.progress.note(&format!("{} at {n} tiles: {why}", p.name)),
            }
        }
    }
    Ok(())
}

/// A timed peer as a sweep point, or why it is not one.
fn point(p: &Peer, data: &HostData, s: &Slice, k: String, gpu: String) -> Result<Record, String> {
    let t = match (&p.status, &p.timing) {
        (Status::Passed, Some(t)) => t,
        (status, _) => {
            return Err(format!(
                "{status:?}, not timed: {}",
                p.detail.as_deref().unwrap_or("no reason given")
            ));
        }
    };
    let id = PointId {
        key: k,
        variant: p.name.clone(),
        mechanism: None,
        stages: 0,
        only: 0,
        dtype: s.dtype,
        hidden: data.view.hidden,
        tile_rows: s.tile_rows,
        tiles: data.view.tokens.div_ceil(s.tile_rows),
        blocks: 0,
        tiles_per_block: 0,
    };
    let from = Provenance {
        validated: p
            .checked
            .clone()
            .unwrap_or_else(|| "validated against the f64 reference".into()),
        gpu,
        peer: Some(format!(
            "{}; {}",
            p.version.as_deref().unwrap_or("version unknown"),
            p.math
        )),
    };
    let bytes = data.view.bytes_moved(s.dtype);
    Ok(Record::measured(id, t, bytes, s.ceiling_gbps, from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Summary, Timing};
    use crate::sweep::plots;

    fn slice() -> Slice<'static> {
        Slice {
            dtype: DType::Bf16,
            tile_rows: 2,
            tiles: &[8],
            ceiling_gbps: 4000.0,
        }
    }

    fn data() -> HostData {
        let view = View::new(16, 64, None, 0, None, DType::Bf16).unwrap();
        HostData::generate(&crate::workload::copy::Copy, view, DType::Bf16, 3)
    }

    fn timed(name: &str, ms: &[f64]) -> Peer {
        let mut p = Peer::new(name, Some("torch 2.11.0".into()), "f32 math, one rounding");
        p.checked = Some("every element against the f64 reference".into());
        p.timing = Some(Timing {
            device_ms: ms.to_vec(),
            device: Summary::of(ms).unwrap(),
            host_submit_us: vec![5.0; ms.len()],
            host_submit: Summary::of(&vec![5.0; ms.len()]).unwrap(),
            warmup: 5,
            buffer_sets: 1,
            host_bound_samples: 0,
            clocks: None,
        });
        p
    }

    #[test]
    fn a_timed_peer_is_a_point_without_mechanism_or_stages() {
        let d = data();
        let k = key("torch.compile", 0, DType::Bf16, 64, 2, 8);
        let r = point(
            &timed("torch.compile", &[0.002, 0.001, 0.003]),
            &d,
            &slice(),
            k.clone(),
            "GPU 0: X (u)".into(),
        )
        .unwrap();
        assert_eq!(
            (&r.key, r.variant.as_str(), r.tiles),
            (&k, "torch.compile", 8)
        );
        assert!(r.mechanism.is_none() && !r.is_own() && r.stages == 0);
        assert_eq!(r.median_ms, 0.002);
        assert_eq!(r.bytes_moved, 2 * 16 * 64 * 2);
        assert!((r.gbps - r.bytes_moved as f64 / 0.002e-3 / 1e9).abs() < 1e-9);
        assert_eq!(
            r.peer.as_deref(),
            Some("torch 2.11.0; f32 math, one rounding")
        );
        assert_eq!(r.validated, "every element against the f64 reference");
        // a JSONL line round-trips, and an older line (no `peer`) reads as one of our own
        let line = serde_json::to_string(&r).unwrap();
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        let own = line.replace(",\"peer\":\"torch 2.11.0; f32 math, one rounding\"", "");
        assert!(serde_json::from_str::<Record>(&own).unwrap().is_own());
    }

    /// Written to the JSONL, a peer point reads back as a point (for the plots, `--resume` and
    /// `merge`), though the model, which wants stages, never takes it.
    #[test]
    fn a_peer_point_survives_the_file() {
        let d = data();
        let k = key("torch.compile", 0, DType::Bf16, 64, 2, 8);
        let peer = point(
            &timed("torch.compile", &[0.002]),
            &d,
            &slice(),
            k.clone(),
            "g".into(),
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("tilepipe-sweep-peers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("sweep.jsonl");
        let _ = std::fs::remove_file(&f);
        append(&f, &crate::sweep::tests::record("sync", 0, 1, 8, 0.01)).unwrap();
        append(&f, &peer).unwrap();
        let loaded = crate::sweep::read(&f).unwrap();
        assert_eq!(loaded.records.len(), 2, "{:?}", loaded.skipped);
        assert_eq!(loaded.records[1], peer);
        assert!(crate::sweep::measured(&f).unwrap().contains(&k));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_peer_that_failed_or_was_skipped_is_no_point_and_says_why() {
        let d = data();
        let mut failed = timed("torch eager", &[0.002]);
        failed.fail("validation: 12 elements beyond the bound".into());
        let why = point(&failed, &d, &slice(), "k".into(), "g".into()).unwrap_err();
        assert!(
            why.contains("Failed") && why.contains("12 elements"),
            "{why}"
        );
        let skipped = Peer::skipped("torch.compile", "torch is not installed".into());
        let why = point(&skipped, &d, &slice(), "k".into(), "g".into()).unwrap_err();
        assert!(why.contains("torch is not installed"), "{why}");
    }

    /// The whole loop against a stand-in for Python: each peer timed once per tile count, appended
    /// to the file; a resumed sweep starts no session for points it has; shards split the peers'
    /// points between them exactly.
    #[test]
    fn peers_are_measured_once_per_owned_point() {
        use crate::sweep::shard::Shard;
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for n in [2usize, 4] {
            // a dense view: the copy's exact output is the input allocation itself
            let view = View::new(n * 2, 64, None, 0, None, DType::Bf16).unwrap();
            let x = HostData::generate(&crate::workload::copy::Copy, view, DType::Bf16, 1).x;
            std::fs::write(d.join(format!("{n}.bin")), x).unwrap();
        }
        let py = d.join("python");
        // answers for both peers with the output of the tile count the spec asks for
        let script = r#"#!/bin/sh
read spec
echo called >> DIR/calls
case "$spec" in *'"tokens":4'[,}]*) n=2;; *) n=4;; esac
p='"version":"torch 9","math":"m","out":"DIR/'$n'.bin"'
echo '{"event":"outputs","peers":[{"name":"torch eager",'$p'},{"name":"torch.compile",'$p'}]}'
s='"device_ms":[0.01,0.011],"host_submit_us":[5,6],"warmup":5,"buffer_sets":1'
while read t; do
  case "$t" in *eager*) n="torch eager";; *) n="torch.compile";; esac
  echo '{"event":"timings","peers":[{"name":"'"$n"'",'$s'}]}'
done
"#
        .replace("DIR", &d.display().to_string());
        std::fs::write(&py, script).unwrap();
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        let progress = Progress::silent();
        let ctx = Context {
            workload: &crate::workload::copy::Copy,
            device: 0,
            l2_bytes: 1 << 20,
            gpu: "GPU 0: test (GPU-0)".into(),
            progress: &progress,
            clock: Box::new(|| None),
        };
        let s = Slice {
            tiles: &[2, 4],
            ..slice()
        };
        let opts = |file: &str, shard: Option<Shard>| SweepOptions {
            spec: Default::default(),
            hidden: 64,
            seed: 1,
            jsonl: d.join(file),
            resume: true,
            timing: Default::default(),
            shard,
            worker: None,
            torch_python: Some(py.clone()),
        };
        let calls = || {
            std::fs::read_to_string(d.join("calls"))
                .unwrap_or_default()
                .lines()
                .count()
        };
        let o = opts("all.jsonl", None);
        let mut records = Vec::new();
        measure(&ctx, &o, &py, &s, &BTreeSet::new(), &mut records).unwrap();
        assert_eq!(records.len(), 4, "two peers at two tile counts");
        assert!(records.iter().all(|r| r.median_ms > 0.0 && !r.is_own()));
        assert_eq!(calls(), 2);
        let written = crate::sweep::measured(&o.jsonl).unwrap();
        assert_eq!(written.len(), 4);
        let mut again = Vec::new();
        measure(&ctx, &o, &py, &s, &written, &mut again).unwrap();
        assert!(again.is_empty());
        assert_eq!(calls(), 2, "no session for points already measured");
        let mut split = BTreeSet::new();
        for index in 0..2 {
            let o = opts(&format!("s{index}.jsonl"), Some(Shard { index, count: 2 }));
            let mut mine = Vec::new();
            measure(&ctx, &o, &py, &s, &BTreeSet::new(), &mut mine).unwrap();
            for r in mine {
                assert!(split.insert(r.key), "a point in two shards");
            }
        }
        assert_eq!(split, written, "the shards' points are the sweep's");
    }

    /// Peers are lines of the time and bandwidth plots; the speedup plot and the model leave them
    /// out (they have no stages and no probes).
    #[test]
    fn peers_are_drawn_beside_the_variants_but_not_in_the_speedups() {
        let mut r = vec![
            crate::sweep::tests::record("sync", 0, 1, 64, 0.02),
            crate::sweep::tests::record("cpasync-cg16-s2", 0, 2, 64, 0.018),
        ];
        let d = View::new(128, 4096, None, 0, None, DType::Bf16).unwrap();
        let data = HostData::generate(&crate::workload::copy::Copy, d, DType::Bf16, 1);
        let s = Slice {
            tiles: &[64],
            ..slice()
        };
        let k = key("torch.compile", 0, DType::Bf16, 4096, 2, 64);
        r.push(point(&timed("torch.compile", &[0.03]), &data, &s, k, "g".into()).unwrap());
        assert!(plots::time_per_tile(&r).unwrap().contains("torch.compile"));
        assert!(plots::bandwidth(&r).unwrap().contains("torch.compile"));
        let speedup = plots::speedup_vs_stages(&r).unwrap();
        assert!(speedup.contains("cpasync-cg16") && !speedup.contains("torch"));
        assert!(
            plots::model_table(&r)
                .iter()
                .all(|(c, _, _)| c.variant != "torch.compile")
        );
    }
}
