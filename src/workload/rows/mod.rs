//! Row tiles of an activation view X [tokens x hidden] that may be strided and offset (`View`): the
//! problem RMSNorm and copy share. A row workload is its compute body (`RowBody`: the kernel, the
//! f64 reference of one row, the tolerance); everything else is here: the view's rules per
//! mechanism, inputs, device buffers, kernel parameters and tensor map, validation shapes, and the
//! `Workload` implementation every row body runs through. The output Y is dense.

mod cases;
pub mod catalogue;
mod config;
mod data;
mod fit;
mod judge;
mod params;
mod subject;
mod sweep;
mod view;

pub use catalogue::{RowShape, RowVariant};
pub use config::{BuildConfig, MAX_SLOT_BYTES};
pub use data::{HostData, uniform_vector};
pub use judge::{Layout, against_baseline, against_reference, written_outside};
pub use params::{DeviceData, RowParams, rotation_sets, row_chunk, row_map, tiles};
pub use view::{OutLayout, View};

use super::{
    Bound, Build, Case, Grid, KernelSource, Problem, ProblemFlags, Refs, Traffic, Walk, Workload,
};
use crate::Result;
use crate::dtype::{DType, Tolerance};
use crate::gpu::{DevBuf, DeviceInfo, Gpu};
use crate::peers::Subject;
use crate::pipeline::{Ctl, Instrument, Mechanism, Variant};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// A row workload's compute body, host side: what its kernel computes on a row tile, the f64
/// reference of one output row, its error bounds and its arithmetic.
pub trait RowBody: Send + Sync + 'static {
    fn name(&self) -> &'static str;
    fn formula(&self) -> &'static str;
    fn kernel(&self) -> KernelSource;
    /// The epsilon built into the kernel, where the formula has one.
    fn eps(&self) -> Option<f64> {
        None
    }
    /// The per-column vector the kernel reads besides X (RMSNorm's gamma), seeded; empty if none.
    fn aux(&self, view: &View, dtype: DType, seed: u64) -> Vec<u8>;
    /// The formula in torch (Python): `compute(x, gamma, eps)`, the f32-math spelling timed eager
    /// and compiled, and `EXTRA`, other spellings by name -> (function, math in words).
    fn torch(&self) -> &'static str;
    /// The f64 reference of one output row, from the same rounded inputs the GPU sees.
    fn reference_row(&self, data: &HostData, row: usize, out: &mut [f64]);
    /// Error bounds of an output of `dtype` against the f64 reference.
    fn tolerance(&self, dtype: DType) -> Tolerance;
    /// Floating-point operations per element, as the kernel spells them (a multiply-add counts 2).
    fn flops_per_element(&self) -> u64;
}

/// A row workload: a compute body on row tiles.
pub struct Rows(pub &'static dyn RowBody);

/// A row problem: the view, its precision, and the run's tile height.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RowProblem {
    pub view: View,
    pub dtype: DType,
    pub tile_rows: usize,
}

impl RowProblem {
    /// `view` in `dtype`, in tiles of `tile_rows` rows (default: about 16 KB a tile).
    pub fn new(view: View, dtype: DType, tile_rows: Option<usize>) -> RowProblem {
        RowProblem {
            view,
            dtype,
            tile_rows: BuildConfig::new(dtype, view.hidden, tile_rows).tile_rows,
        }
    }

    /// The run's build configuration (a variant with a tile of its own changes it).
    pub fn config(&self) -> BuildConfig {
        BuildConfig::new(self.dtype, self.view.hidden, Some(self.tile_rows))
    }
}

impl Problem for RowProblem {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn label(&self) -> String {
        let v = &self.view;
        let out = match v.out {
            Some(o) => format!("; output row stride {}, offset {}", o.row_stride, o.offset),
            None => String::new(),
        };
        format!(
            "{} {} x {} (row stride {}, offset {}{out}), tiles of {} rows",
            self.dtype, v.tokens, v.hidden, v.row_stride, v.offset, self.tile_rows
        )
    }

    fn host_bytes(&self) -> u64 {
        self.view.host_bytes(self.dtype)
    }
}

impl Rows {
    /// `v`'s build configuration on `p` with `instrument` added.
    fn config(&self, v: &RowVariant, p: &RowProblem, instrument: Instrument) -> BuildConfig {
        catalogue::config(
            v,
            &BuildConfig {
                instrument,
                ..p.config()
            },
        )
    }
}

/// The flags a row problem takes.
const FLAGS: [&str; 9] = [
    "--dtype",
    "--tokens",
    "--hidden",
    "--row-stride",
    "--offset",
    "--alloc",
    "--out-row-stride",
    "--out-offset",
    "--tile-rows",
];

impl Workload for Rows {
    type Problem = RowProblem;
    type Shape = RowShape;
    type Inputs = HostData;
    type Buffers = DeviceData;
    type Params = RowParams;

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn formula(&self) -> &'static str {
        self.0.formula()
    }

    fn kernel(&self) -> KernelSource {
        self.0.kernel()
    }

    fn eps(&self) -> Option<f64> {
        self.0.eps()
    }

    fn bound(&self) -> Bound {
        Bound::Memory
    }

    fn problem(&self, f: &ProblemFlags) -> Result<RowProblem> {
        f.refuse_others(self.name(), &FLAGS)?;
        let dtype = f.dtype.unwrap_or(DType::Bf16);
        let hidden = f.hidden.unwrap_or(4096);
        let view = View::new(
            f.tokens.unwrap_or(262_144),
            hidden,
            f.row_stride,
            f.offset.unwrap_or(0),
            f.alloc,
            dtype,
        )?
        .with_out(f.out_row_stride, f.out_offset.unwrap_or(0), dtype)?;
        BuildConfig::checked(dtype, hidden, f.tile_rows)?;
        Ok(RowProblem::new(view, dtype, f.tile_rows))
    }

    fn problem_args(&self, p: &RowProblem) -> Vec<String> {
        let v = &p.view;
        [
            ("--dtype", p.dtype.name().to_string()),
            ("--tokens", v.tokens.to_string()),
            ("--hidden", v.hidden.to_string()),
            ("--row-stride", v.row_stride.to_string()),
            ("--offset", v.offset.to_string()),
            ("--alloc", v.alloc.to_string()),
            ("--out-row-stride", v.out_layout().row_stride.to_string()),
            ("--out-offset", v.out_layout().offset.to_string()),
            ("--tile-rows", p.tile_rows.to_string()),
        ]
        .into_iter()
        .flat_map(|(f, v)| [f.to_string(), v])
        .collect()
    }

    fn catalogue(&self, _dtype: DType) -> Vec<RowVariant> {
        catalogue::catalogue()
    }

    fn controls(&self, _dtype: DType) -> Vec<RowVariant> {
        catalogue::controls()
    }

    fn fit(&self, v: &RowVariant, problems: &[&RowProblem]) -> RowVariant {
        let Some(first) = problems.first() else {
            return v.clone();
        };
        let views: Vec<View> = problems.iter().map(|p| p.view).collect();
        fit::fit(v, &views, &self.config(v, first, Instrument::CLEAN))
    }

    fn can_implement(
        &self,
        v: &RowVariant,
        p: &RowProblem,
        gpu: &DeviceInfo,
    ) -> std::result::Result<(), String> {
        let cfg = self.config(v, p, Instrument::CLEAN);
        if let Some(why) =
            catalogue::unsupported_on(v, gpu.arch.sm(), gpu.smem_per_block_optin, &cfg)
        {
            return Err(why);
        }
        fit::can_implement(v, &p.view, &cfg)
    }

    /// Every row variant sums in `sync`'s order, so all are compared with it bit for bit.
    fn twin<'a>(&self, _v: &RowVariant, correct: &'a [RowVariant]) -> Option<&'a RowVariant> {
        correct.first().filter(|b| b.is_baseline())
    }

    fn tile_label(&self, v: &RowVariant, p: &RowProblem) -> String {
        let rows = self.config(v, p, Instrument::CLEAN).tile_rows;
        format!("{rows} row{}", if rows == 1 { "" } else { "s" })
    }

    fn build(&self, v: &RowVariant, p: &RowProblem, instrument: Instrument) -> Build {
        let cfg = self.config(v, p, instrument);
        let mut defines = catalogue::defines(v, &cfg);
        defines.extend([
            format!("-DHIDDEN={}", cfg.hidden),
            format!("-DTILE_ROWS={}", cfg.tile_rows),
        ]);
        Build {
            defines,
            arch_specific: false,
            cluster: 1,
            threads: catalogue::threads(v, &cfg),
            dynamic_smem: catalogue::dynamic_smem(v, &cfg),
        }
    }

    fn completion(&self, v: &RowVariant, p: &RowProblem) -> String {
        catalogue::completion(v, &self.config(v, p, Instrument::CLEAN))
    }

    fn bytes_per_copy(&self, v: &RowVariant, p: &RowProblem) -> u32 {
        catalogue::bytes_per_copy(v, &self.config(v, p, Instrument::CLEAN))
    }

    fn inputs(&self, p: &RowProblem, seed: u64) -> HostData {
        HostData::generate(self.0, p, seed)
    }

    fn upload(&self, gpu: &Gpu, x: &HostData) -> Result<DeviceData> {
        DeviceData::upload(gpu, x)
    }

    fn output<'a>(&self, d: &'a mut DeviceData) -> &'a mut DevBuf {
        &mut d.y
    }

    fn params(&self, gpu: &Gpu, d: &DeviceData, v: &RowVariant, ctl: Ctl) -> Result<RowParams> {
        d.params(gpu, v, ctl)
    }

    fn timing_params(
        &self,
        gpu: &Gpu,
        d: &mut DeviceData,
        v: &RowVariant,
        ctl: Ctl,
    ) -> Result<Vec<RowParams>> {
        d.rotated(gpu, v, ctl)
    }

    /// Persistent blocks walk the tiles, except for `direct`, which launches one block per tile as
    /// Triton's kernels do: with no pipeline to keep filled, the block scheduler starting a fresh
    /// block the moment a row finishes keeps more loads in flight than a block walking tiles.
    fn grid(&self, v: &RowVariant, p: &RowProblem, grid: Grid, resident: u32) -> u32 {
        let n = tiles(&p.view, self.config(v, p, Instrument::CLEAN).tile_rows) as u32;
        match grid {
            Grid::Persistent if v.mechanism == Mechanism::Direct => n.max(1),
            Grid::Persistent => resident.min(n).max(1),
            Grid::Fixed(g) => g.min(n).max(1),
            Grid::Idle(extra) => n + extra,
        }
    }

    fn judge(&self, out: &[u8], x: &HostData, refs: Refs) -> Vec<Verdict> {
        vec![match refs.twin {
            Some((b, bv)) => against_baseline(out, x, b, &bv[0]),
            None => against_reference(out, x, Layout::View),
        }]
    }

    fn traffic(&self, p: &RowProblem) -> Traffic {
        Traffic {
            bytes: p.view.bytes_moved(p.dtype),
            flops: self.0.flops_per_element() * p.view.elements() as u64,
        }
    }

    fn run_cases(&self, p: &RowProblem) -> Result<Vec<Case<RowProblem>>> {
        cases::run_cases(p)
    }

    fn stress_cases(
        &self,
        p: &RowProblem,
        _v: &RowVariant,
        gpu: &DeviceInfo,
    ) -> Result<Vec<Case<RowProblem>>> {
        cases::stress_cases(p, gpu.sm_count)
    }

    fn traced(&self) -> &'static str {
        "sync,cpasync-cg16-s2,tma-s3"
    }

    fn suite_axis(&self) -> &'static str {
        "--suite-hidden"
    }

    fn suite_groups(
        &self,
        dtypes: &[DType],
        axis: Option<&str>,
    ) -> Result<Vec<(String, RowProblem)>> {
        let hidden = match axis {
            Some(list) => cases::parse_hidden(list)?,
            None => cases::SUITE_HIDDEN.to_vec(),
        };
        let mut groups = Vec::new();
        for &dtype in dtypes {
            for &h in &hidden {
                let view = View::new(1, h, None, 0, None, dtype)?;
                BuildConfig::checked(dtype, h, None)?;
                groups.push((format!("{dtype} h{h}"), RowProblem::new(view, dtype, None)));
            }
            // f16 takes bf16's paths (2-byte elements) everywhere but the conversion
            let views = if dtype == DType::F16 {
                Vec::new()
            } else {
                cases::misaligned_groups(hidden[0], dtype)?
            };
            for (tag, view) in views {
                groups.push((
                    format!("{dtype} h{} {tag}", hidden[0]),
                    RowProblem::new(view, dtype, None),
                ));
            }
        }
        Ok(groups)
    }

    fn suite_cases(&self, group: &RowProblem, seed: u64) -> Result<Vec<Case<RowProblem>>> {
        cases::suite_cases(group, seed)
    }

    /// A control runs stressed on the stress shapes: every run must fail in one of them.
    fn control_cases(
        &self,
        group: &RowProblem,
        _v: &RowVariant,
        gpu: &DeviceInfo,
    ) -> Result<(Vec<Case<RowProblem>>, Instrument)> {
        Ok((
            cases::stress_cases(group, gpu.sm_count)?,
            Instrument::STRESSED,
        ))
    }

    /// 81 rows of 4096 bf16 on 4 blocks: every block walks many tiles, and racecheck stays quick.
    fn sanitize_case(&self) -> Result<Case<RowProblem>> {
        let view = View::new(81, 4096, None, 0, None, DType::Bf16)?;
        Ok(Case::new(
            "sanitizer",
            RowProblem::new(view, DType::Bf16, None),
            Grid::Fixed(4),
        ))
    }

    fn sanitize_variants(&self) -> &'static str {
        "sync,cpasync-cg16-s2,mca-pipeline-a16-s2,mca-barrier-a16-s2,bulk-s2,tma-s3,tma-ws-s3,ctl-cpasync-skip-wait,ctl-cpasync-early-release"
    }

    fn sweep_axis(&self) -> (&'static str, &'static [usize]) {
        ("tiles", &sweep::TILES)
    }

    fn sweep_mechanisms(
        &self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [u32],
    ) {
        (&sweep::MECHANISMS, &["sync", "cpasync", "tma"], &[2, 3, 4])
    }

    fn sweep_variant(&self, mechanism: &str, stages: u32, _dtype: DType) -> Option<RowVariant> {
        sweep::variant(mechanism, stages)
    }

    fn sweep_problem(
        &self,
        base: &RowProblem,
        dtype: DType,
        tiles: usize,
        tile_rows: Option<usize>,
    ) -> Result<RowProblem> {
        sweep::problem(base.view.hidden, dtype, tiles, tile_rows)
    }

    fn sweep_point(&self, p: &RowProblem) -> (String, String) {
        let (h, r) = (p.view.hidden, p.tile_rows);
        let t = p.view.tokens.div_ceil(r);
        (format!("h{h} r{r}"), format!("h{h}|r{r}|t{t}"))
    }

    /// A small view of the sweep's rows (64 tiles and a tail): its run cases validate the builds.
    fn sweep_check(&self, largest: &RowProblem) -> Result<RowProblem> {
        let v = &largest.view;
        let view = View::new(
            largest.tile_rows * 64 + 1,
            v.hidden,
            None,
            0,
            None,
            largest.dtype,
        )?;
        Ok(RowProblem { view, ..*largest })
    }

    fn sweep_buffers(&self, gpu: &Gpu, largest: &RowProblem, seed: u64) -> Result<DeviceData> {
        DeviceData::repeated(gpu, self.0, largest, seed, sweep::TIMING_BLOCK)
    }

    fn resize(&self, d: &mut DeviceData, p: &RowProblem) -> bool {
        d.shrink_to(p)
    }

    /// A step per tile of rows.
    fn walk(&self, v: &RowVariant, p: &RowProblem, blocks: u32) -> Walk {
        let rows = self.config(v, p, Instrument::CLEAN).tile_rows;
        Walk::strided(tiles(&p.view, rows) as u64, 1, blocks)
    }

    fn stage_probes(&self) -> bool {
        true
    }

    fn tile_axis(&self) -> bool {
        true
    }

    fn peer_subject<'a>(
        &'a self,
        _p: &'a RowProblem,
        x: &'a HostData,
        _vendor: Option<&'a [u8]>,
    ) -> Box<dyn Subject + 'a> {
        Box::new(subject::RowSubject { data: x })
    }
}

/// The variant itself, for callers that need the pipeline type by name.
pub type RowPipe = Variant<RowShape>;
