//! One variant (or control) once, for external tools.

use crate::dtype::DType;
use crate::harness::tiles;
use crate::harness::{self, DeviceData, Harness};
use crate::pipeline::{BuildConfig, Variant};
use crate::workload::{HostData, View};
use crate::{Error, Result};

/// Runs one variant (or control) once on fresh inputs and checks it against the f64 reference:
/// a single launch for external tools (compute-sanitizer, Nsight Compute) to observe.
#[allow(clippy::too_many_arguments)]
pub fn probe(
    h: &Harness,
    name: &str,
    view: View,
    dtype: DType,
    seed: u64,
    tile_rows: Option<usize>,
    stress: u32,
    blocks: Option<u32>,
    wait_timeout_ns: u64,
) -> Result<crate::check::Verdict> {
    let all = h.workload.variants();
    let v = Variant::select(all, Some(name))?
        .into_iter()
        .find(|v| v.name == name)
        .ok_or_else(|| {
            Error::InvalidArgument(format!("probe takes one exact variant name, got '{name}'"))
        })?;
    let cfg = v.config(&BuildConfig {
        stress,
        ..BuildConfig::new(dtype, view.hidden, tile_rows)
    });
    if let Some(why) = h.unsupported(&v, &view, &cfg) {
        return Err(Error::Unsupported {
            variant: v.name,
            reason: why,
        });
    }
    let built = h.build_all(&[(v.clone(), cfg)]).remove(0)?;
    let ev = h.evidence(&v, &cfg, &built)?;
    let p = h.prepare(&v, &cfg, built, ev)?;
    let data = HostData::generate(h.workload, view, dtype, seed);
    let mut dd = DeviceData::upload(&h.gpu, &data)?;
    dd.wait_timeout_ns = wait_timeout_ns;
    let n = tiles(&view, cfg.tile_rows);
    let grid = blocks.unwrap_or_else(|| h.persistent_grid(&p, n));
    let out = h.run_checked(&p, &mut dd, grid, seed as u32)?;
    Ok(harness::verdict(&out, &data, cfg.tile_rows, None))
}
