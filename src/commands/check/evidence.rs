//! The suite's evidence tests of every clean build: the occupancy the model computes against the
//! driver's, the mbarrier initialisation published before its first wait, every wgmma retired
//! before the slot it reads is released, and the SASS attesting the claimed mechanism (and the
//! workload's claimed math).

use crate::engine::record;
use crate::engine::{Engine, Ready};
use crate::evidence::sass::{self, Attestation};
use crate::pipeline::Claim;
use crate::results::SuiteReport;
use crate::workload::Workload;

pub fn tests<W: Workload>(
    e: &Engine,
    w: &W,
    ready: &[Option<Ready<W>>],
    tag: &str,
    report: &mut SuiteReport,
) {
    let progress = &e.progress;
    for r in ready
        .iter()
        .flatten()
        .filter(|r| r.job.instrument.is_clean())
    {
        let name = format!("{tag} {} ({} B copies)", r.name(), r.variant().copy_bytes);
        let res = &r.resources;
        let o = &res.occupancy;
        record(
            progress,
            report,
            format!("occupancy {name}"),
            o.blocks_per_sm == res.driver_blocks_per_sm,
            format!(
                "model {} blocks/SM ({}), driver {}; {} registers, {} B shared",
                o.blocks_per_sm,
                o.limiter.name(),
                res.driver_blocks_per_sm,
                res.function.registers,
                res.dynamic_smem
            ),
        );
        let kernel = sass::parse::parse(&r.sass.listing)
            .into_iter()
            .find(|f| f.name == w.kernel().entry);
        let lag = sass::protocol::mma_lag(&r.built.options);
        let retired = |f: &_| sass::protocol::wgmma_retired(f, lag);
        let facts: [(&str, sass::protocol::Fact); 3] = [
            ("mbarrier-init", &sass::protocol::init_published),
            ("wgmma-retired", &retired),
            ("uniforms-written", &sass::protocol::uniforms_written),
        ];
        for (test, fact) in facts {
            if let Some(verdict) = kernel.as_ref().and_then(fact) {
                record(
                    progress,
                    report,
                    format!("{test} {name}"),
                    verdict.is_ok(),
                    verdict.unwrap_or_else(|e| e),
                );
            }
        }
        // the high-level API's claim is what its lowering reports: attested only where the
        // workload also claims math
        if r.variant().claim() == Claim::AnyAsync && r.math.is_none() {
            continue;
        }
        let a = &r.sass.attestation;
        let math_ok = r.math.as_ref().is_none_or(Attestation::is_attested);
        let detail = match (a, &r.math) {
            (Attestation::Unverified { reason }, _) => format!("unverified: {reason}"),
            (_, Some(m)) => format!("movement: {}; math: {}", a.label(), m.label()),
            (_, None) => a.label(),
        };
        record(
            progress,
            report,
            format!("sass {name}"),
            a.is_attested() && math_ok,
            detail,
        );
    }
}
