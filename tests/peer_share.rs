//! A compute-bound run with no vendor library (attention beside SDPA, recorded on an H100): the
//! share of the ceiling is taken against the fastest peer that passed, and the tables say which.

use std::path::Path;
use tilepipe::render::formats;
use tilepipe::results::Status;
use tilepipe::results::peer::share_of_fastest_peer;

type RunResults = tilepipe::results::RunResults<serde_json::Value>;

/// The recorded run with its shares as the runs before this rule left them: none.
fn recorded() -> RunResults {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100-attention.json");
    let mut r = RunResults::read(&path).unwrap();
    let rows = r.variants.iter_mut().map(|v| &mut v.perf);
    for perf in rows
        .chain(r.peers.iter_mut().map(|p| &mut p.perf))
        .flatten()
    {
        perf.pct_of_ceiling = None;
    }
    r
}

fn share(r: &RunResults, name: &str) -> f64 {
    let rows = r.variants.iter().map(|v| (&v.name, &v.perf));
    let peers = r.peers.iter().map(|p| (&p.name, &p.perf));
    let (_, perf) = rows.chain(peers).find(|(n, _)| *n == name).unwrap();
    perf.as_ref().unwrap().pct_of_ceiling.unwrap()
}

#[test]
fn attention_is_measured_against_its_fastest_peer() {
    let mut r = recorded();
    share_of_fastest_peer(&mut r);
    assert_eq!(r.ceiling_peer.as_deref(), Some("SDPA, cuDNN"));
    // cuDNN 797.2 us, tma-wgmma-ws-s2 985.8 us, SDPA flash 1522.4 us
    assert!((share(&r, "tma-wgmma-ws-s2") - 80.87).abs() < 0.05);
    assert!((share(&r, "SDPA, cuDNN") - 100.0).abs() < 1e-9);
    assert!((share(&r, "SDPA, flash") - 52.37).abs() < 0.05);
    let md = formats::run::markdown(&r);
    assert!(md.contains("% of SDPA, cuDNN"), "{md}");
}

#[test]
fn a_peer_that_failed_validation_is_never_the_reference() {
    let mut r = recorded();
    let cudnn = r
        .peers
        .iter_mut()
        .find(|p| p.name == "SDPA, cuDNN")
        .unwrap();
    cudnn.status = Status::Failed;
    share_of_fastest_peer(&mut r);
    // the next fastest: flex_attention, 1129.2 us
    assert_eq!(r.ceiling_peer.as_deref(), Some("flex_attention"));
    assert!(share(&r, "tma-wgmma-ws-s2") > 100.0);
}

#[test]
fn a_run_with_a_vendor_keeps_its_vendor() {
    let mut r = recorded();
    r.vendor = Some(r.peers[0].clone());
    share_of_fastest_peer(&mut r);
    assert_eq!(r.ceiling_peer, None);
    assert!(
        r.variants[0]
            .perf
            .as_ref()
            .unwrap()
            .pct_of_ceiling
            .is_none()
    );
}
