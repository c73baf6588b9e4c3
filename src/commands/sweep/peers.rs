//! The torch peers at every size of a sweep (`sweep --peers torch`): the same inputs, precision
//! and seed as tilepipe's points, validated as the workload validates its own outputs before they
//! are timed, each that passed appended as a point of its own (no mechanism, no stages: a line of
//! the time and figure plots, never of the speedup plot or the model).

use super::SweepOptions;
use super::measure::{Slice, gpu_of};
use crate::Result;
use crate::clocks::ClockSample;
use crate::engine::Engine;
use crate::peers::{self, TorchRequest};
use crate::progress::Progress;
use crate::results::sweep::{Record, key};
use crate::results::sweep_store::append;
use crate::results::{Peer, Status};
use crate::workload::{Problem, Workload};
use std::path::Path;

/// What the peers need of the GPU the sweep runs on (nothing that needs the GPU itself, so the
/// loop is tested without one).
pub struct Context<'a> {
    pub device: usize,
    /// The GPU, as every point names it.
    pub gpu: String,
    pub progress: &'a Progress,
    /// The GPU's clocks, read around and during each peer's timing.
    pub clock: Box<dyn Fn() -> Option<ClockSample> + 'a>,
}

impl<'a> Context<'a> {
    pub fn of(e: &'a Engine) -> Context<'a> {
        Context {
            device: e.info().ordinal,
            gpu: gpu_of(e),
            progress: &e.progress,
            clock: Box::new(|| e.clock()),
        }
    }
}

/// Runs the peers at each size whose points this process owns and has not measured yet,
/// appending each timed peer to the sweep and to `records`; a peer that failed, could not run or
/// was not timed is a note with its reason, not a point.
pub fn measure<W: Workload>(
    e: &Context,
    w: &W,
    o: &SweepOptions<W::Problem>,
    python: &Path,
    s: &Slice<W::Problem>,
    records: &mut Vec<Record>,
) -> Result<()> {
    for (n, p) in s.points {
        crate::interrupt::check()?;
        let (config, point) = w.sweep_point(p);
        let x = w.inputs(p, o.seed);
        let subject = w.peer_subject(p, &x, None);
        let key_of = |name: &str| key(name, 0, p.dtype(), &point);
        let wanted = |k: &String| !s.done.contains(k) && o.shard.is_none_or(|sh| sh.owns(k));
        if !subject
            .names()
            .iter()
            .map(|name| key_of(name))
            .any(|k| wanted(&k))
        {
            continue;
        }
        e.progress.note(&format!("torch peers at {}", p.label()));
        let sync_ms = records
            .iter()
            .find(|r| {
                r.variant == "sync" && r.only == 0 && r.key == key("sync", 0, p.dtype(), &point)
            })
            .map(|r| r.median_ms);
        let req = TorchRequest {
            python: python.to_path_buf(),
            device: e.device,
            buffer_sets: 1,
            timing: o.timing,
            ceiling_gbps: s.copy,
            baseline_ms: sync_ms,
        };
        for peer in peers::torch(&req, subject.as_ref(), &*e.clock) {
            let k = key_of(&peer.name);
            let at = At {
                key: k.clone(),
                config: config.clone(),
                size: *n,
                gpu: e.gpu.clone(),
            };
            match point_of(w, &peer, p, at, s.copy.unwrap_or(0.0)) {
                Ok(rec) if wanted(&k) => {
                    append(&o.jsonl, &rec)?;
                    records.push(rec);
                }
                Ok(_) => {}
                Err(why) => e
                    .progress
                    .note(&format!("{} at {}: {why}", peer.name, p.label())),
            }
        }
    }
    Ok(())
}

/// Where a peer's point lies: its key, configuration, size and GPU.
pub struct At {
    pub key: String,
    pub config: String,
    pub size: usize,
    pub gpu: String,
}

/// A timed peer as a sweep point, or why it is not one.
pub fn point_of<W: Workload>(
    w: &W,
    peer: &Peer,
    p: &W::Problem,
    at: At,
    ceiling: f64,
) -> Result<Record, String> {
    let t = match (&peer.status, &peer.timing) {
        (Status::Passed, Some(t)) => t,
        (status, _) => {
            return Err(format!(
                "{status:?}, not timed: {}",
                peer.detail.as_deref().unwrap_or("no reason given")
            ));
        }
    };
    Ok(Record {
        variant: peer.name.clone(),
        validated: peer
            .checked
            .clone()
            .unwrap_or_else(|| "validated against the f64 reference".into()),
        gpu: Some(at.gpu),
        peer: Some(format!(
            "{}; {}",
            peer.version.as_deref().unwrap_or("version unknown"),
            peer.math
        )),
        ..super::record::timed(w, p, t, ceiling, (at.key, at.config, at.size))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::render::sweep as plots;
    use crate::results::Timing;
    use crate::results::sweep_store;
    use crate::verdict::statistics::Summary;
    use crate::workload::copy::Copy;
    use crate::workload::rows::{RowProblem, Rows, View};

    const W: Rows = Rows(&Copy);

    fn problem() -> RowProblem {
        let view = View::new(16, 64, None, 0, None, DType::Bf16).unwrap();
        RowProblem::new(view, DType::Bf16, Some(2))
    }

    fn at(k: &str) -> At {
        At {
            key: k.into(),
            config: "h64 r2".into(),
            size: 8,
            gpu: "GPU 0: X (u)".into(),
        }
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
        let k = key("torch.compile", 0, DType::Bf16, "h64|r2|t8");
        let r = point_of(
            &W,
            &timed("torch.compile", &[0.002, 0.001, 0.003]),
            &problem(),
            at(&k),
            4000.0,
        )
        .unwrap();
        assert_eq!(
            (&r.key, r.variant.as_str(), r.size),
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
        let k = key("torch.compile", 0, DType::Bf16, "h64|r2|t8");
        let peer = point_of(
            &W,
            &timed("torch.compile", &[0.002]),
            &problem(),
            at(&k),
            4000.0,
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("tilepipe-sweep-peers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("sweep.jsonl");
        let _ = std::fs::remove_file(&f);
        append(
            &f,
            &crate::results::sweep::tests::record("sync", 0, 1, 8, 0.01),
        )
        .unwrap();
        append(&f, &peer).unwrap();
        let loaded = sweep_store::read(&f).unwrap();
        assert_eq!(loaded.records.len(), 2, "{:?}", loaded.skipped);
        assert_eq!(loaded.records[1], peer);
        assert!(sweep_store::measured(&f).unwrap().contains(&k));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_peer_that_failed_or_was_skipped_is_no_point_and_says_why() {
        let mut failed = timed("torch eager", &[0.002]);
        failed.fail("validation: 12 elements beyond the bound".into());
        let why = point_of(&W, &failed, &problem(), at("k"), 4000.0).unwrap_err();
        assert!(
            why.contains("Failed") && why.contains("12 elements"),
            "{why}"
        );
        let skipped = Peer::skipped("torch.compile", "torch is not installed".into());
        let why = point_of(&W, &skipped, &problem(), at("k"), 4000.0).unwrap_err();
        assert!(why.contains("torch is not installed"), "{why}");
    }

    /// The whole loop against a stand-in for Python: each peer timed once per tile count, appended
    /// to the file; a resumed sweep starts no session for points it has; shards split the peers'
    /// points between them exactly.
    #[test]
    fn peers_are_measured_once_per_owned_point() {
        use crate::commands::sweep::SweepSpec;
        use crate::commands::sweep::shard::Shard;
        use std::collections::BTreeSet;
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let points: Vec<(usize, RowProblem)> = [2usize, 4]
            .into_iter()
            .map(|n| {
                (
                    n,
                    crate::workload::rows::RowProblem::new(
                        View::new(n * 2, 64, None, 0, None, DType::Bf16).unwrap(),
                        DType::Bf16,
                        Some(2),
                    ),
                )
            })
            .collect();
        for (n, p) in &points {
            // a dense view: the copy's exact output is the input allocation itself
            std::fs::write(d.join(format!("{n}.bin")), W.inputs(p, 1).x).unwrap();
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
            device: 0,
            gpu: "GPU 0: test (GPU-0)".into(),
            progress: &progress,
            clock: Box::new(|| None),
        };
        let none = BTreeSet::new();
        let slice = |done| Slice {
            points: &points,
            copy: Some(4000.0),
            done,
        };
        let opts = |file: &str, shard: Option<Shard>| SweepOptions {
            spec: SweepSpec::default_for(&W),
            base: points[0].1,
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
        measure(&ctx, &W, &o, &py, &slice(&none), &mut records).unwrap();
        assert_eq!(records.len(), 4, "two peers at two tile counts");
        assert!(records.iter().all(|r| r.median_ms > 0.0 && !r.is_own()));
        assert_eq!(calls(), 2);
        let written = sweep_store::measured(&o.jsonl).unwrap();
        assert_eq!(written.len(), 4);
        let mut again = Vec::new();
        measure(&ctx, &W, &o, &py, &slice(&written), &mut again).unwrap();
        assert!(again.is_empty());
        assert_eq!(calls(), 2, "no session for points already measured");
        let mut split = BTreeSet::new();
        for index in 0..2 {
            let o = opts(&format!("s{index}.jsonl"), Some(Shard { index, count: 2 }));
            let mut mine = Vec::new();
            measure(&ctx, &W, &o, &py, &slice(&none), &mut mine).unwrap();
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
            crate::results::sweep::tests::record("sync", 0, 1, 64, 0.02),
            crate::results::sweep::tests::record("cpasync-cg16-s2", 0, 2, 64, 0.018),
        ];
        let v = View::new(128, 4096, None, 0, None, DType::Bf16).unwrap();
        let p = RowProblem::new(v, DType::Bf16, Some(2));
        let k = key("torch.compile", 0, DType::Bf16, "h4096|r2|t64");
        let at = At {
            key: k,
            config: "h4096 r2".into(),
            size: 64,
            gpu: "g".into(),
        };
        r.push(point_of(&W, &timed("torch.compile", &[0.03]), &p, at, 4000.0).unwrap());
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
