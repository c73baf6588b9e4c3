//! Attestation: does the SASS show the mechanism a variant claims?

use super::census::Census;
use crate::pipeline::Claim;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Attestation {
    /// The claimed instruction is in the SASS.
    Attested { evidence: String },
    /// The claimed instruction is not there: "claimed X, emitted Y".
    Mismatch { claimed: String, emitted: String },
    /// No disassembler, so nothing was checked. Never a pass.
    Unverified { reason: String },
}

impl Attestation {
    pub fn is_attested(&self) -> bool {
        matches!(self, Attestation::Attested { .. })
    }

    pub fn label(&self) -> String {
        match self {
            Attestation::Attested { .. } => "attested".into(),
            Attestation::Mismatch { claimed, emitted } => {
                format!("claimed {claimed}, emitted {emitted}")
            }
            Attestation::Unverified { .. } => "unverified".into(),
        }
    }
}

pub fn describe(claim: Claim) -> String {
    match claim {
        Claim::Synchronous => "synchronous copy (LDG + STS, no async copy)".into(),
        Claim::Ldgsts { bytes, bypass } => {
            format!(
                "cp.async{} {bytes} B (LDGSTS{}{})",
                if bypass { ".cg" } else { ".ca" },
                if bypass { ".BYPASS" } else { "" },
                match bytes {
                    16 => ".128",
                    8 => ".64",
                    _ => "",
                }
            )
        }
        Claim::BulkCopy => "cp.async.bulk (UBLKCP)".into(),
        Claim::TensorCopy => "cp.async.bulk.tensor (UTMALDG)".into(),
        Claim::AnyAsync => "an asynchronous copy (LDGSTS, UBLKCP or UTMALDG)".into(),
        Claim::Direct => {
            "direct loads (LDG.128 into registers; no async copy, no generic LD.128, no STS.128)"
                .into()
        }
    }
}

pub fn attest(claim: Claim, c: &Census) -> Attestation {
    let asynchronous = c.count("LDGSTS") + c.count("UBLKCP") + c.count("UTMALDG");
    let ok = match claim {
        Claim::Synchronous => asynchronous == 0 && c.count("LDG") > 0 && c.count("STS") > 0,
        Claim::Ldgsts { bytes, bypass } => c.ldgsts(bytes, bypass) > 0,
        Claim::BulkCopy => c.count("UBLKCP") > 0,
        Claim::TensorCopy => c.count("UTMALDG") > 0,
        Claim::AnyAsync => asynchronous > 0,
        // the tile's 16-byte vectors: loaded from global (a generic LD would be the tile read
        // through a pointer not known to be global), never stored to shared memory
        Claim::Direct => {
            asynchronous == 0
                && c.of_width("LDG", 16) > 0
                && c.of_width("LD", 16) == 0
                && c.of_width("STS", 16) == 0
        }
    };
    let found = match claim {
        Claim::Direct => c.direct_summary(),
        _ => c.movement_summary(),
    };
    if ok {
        Attestation::Attested { evidence: found }
    } else {
        Attestation::Mismatch {
            claimed: describe(claim),
            emitted: found,
        }
    }
}
