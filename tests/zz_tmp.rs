mod common;
use tilepipe::dtype::DType;
use tilepipe::engine::build;
use tilepipe::gpu::cache::Cache;
use tilepipe::pipeline::Instrument;
use tilepipe::workload::{Visitor, Workload};
struct D(&'static str, Instrument, &'static str);
impl Visitor for D {
    type Output = ();
    fn visit<W: Workload>(self, w: &'static W) {
        let (tc, nvrtc) = common::nvrtc().unwrap();
        let (_, group) = w.suite_groups(&[DType::Bf16], None).unwrap().remove(0);
        let v = w
            .catalogue(DType::Bf16)
            .into_iter()
            .chain(w.controls(DType::Bf16))
            .find(|v| v.name == self.0)
            .unwrap();
        let b = build::build(
            w,
            &v,
            &group,
            self.1,
            ("sm_90".parse().unwrap(), &tc),
            &nvrtc,
            &Cache::disabled(),
        )
        .unwrap();
        std::fs::write(self.2, &b.cubin).unwrap();
    }
}
#[test]
fn dump() {
    tilepipe::workload::visit(
        "rmsnorm",
        D(
            "cpasync-cg16-s2-el",
            Instrument::STRESSED,
            "/tmp/el-mon.cubin",
        ),
    )
    .unwrap();
    tilepipe::workload::visit(
        "rmsnorm",
        D(
            "cpasync-cg16-s2-el",
            Instrument {
                monitor: false,
                ..Instrument::STRESSED
            },
            "/tmp/el-stress.cubin",
        ),
    )
    .unwrap();
    tilepipe::workload::visit(
        "rmsnorm",
        D("cpasync-cg16-s2", Instrument::STRESSED, "/tmp/cp-mon.cubin"),
    )
    .unwrap();
}
