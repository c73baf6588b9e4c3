//! The lab's scripted mode: commands separated by ';' or newlines, the disclaimer once, the state
//! after each command, and the backlog on the last line.

use super::{DISCLAIMER, Queue, num};
use crate::{Error, Result};

const HELP: &str = "reset | arrival N | service N | step [K] | predict N | show";

/// The most steps one command may take: each is computed in turn.
pub const MAX_STEPS: usize = 1_000_000;

/// The lab's refusal `e` of command `i` (0-based), `raw`, said once as the lab's.
fn in_command(i: usize, raw: &str, e: Error) -> Error {
    let why = match e {
        Error::Lab(why) => why,
        other => other.to_string(),
    };
    Error::Lab(format!("command {} '{raw}': {why}", i + 1))
}

/// Runs a script and returns the lines it prints.
pub fn run(q: &mut Queue, script: &str) -> Result<Vec<String>> {
    let mut out = vec![DISCLAIMER.to_string()];
    let commands: Vec<&str> = script
        .split([';', '\n'])
        .map(str::trim)
        .filter(|c| !c.is_empty() && !c.starts_with('#'))
        .collect();
    if commands.is_empty() {
        return Err(Error::Lab(format!(
            "the script '{script}' holds no command (allowed: {HELP}, separated by ';' or lines)"
        )));
    }
    for (i, raw) in commands.into_iter().enumerate() {
        let mut words = raw.split_whitespace();
        let cmd = words.next().unwrap_or_default().to_ascii_lowercase();
        let arg = words.next();
        if words.next().is_some() {
            return Err(Error::Lab(format!(
                "command {} '{raw}': too many words (allowed: {HELP})",
                i + 1
            )));
        }
        let number = |what: &str| -> Result<f64> {
            let a = arg.ok_or_else(|| {
                Error::Lab(format!("command {} '{raw}': {what} needs a number", i + 1))
            })?;
            a.parse::<f64>().map_err(|_| {
                Error::Lab(format!("command {} '{raw}': '{a}' is not a number", i + 1))
            })
        };
        if let ("reset" | "show", Some(extra)) = (cmd.as_str(), arg) {
            return Err(Error::Lab(format!(
                "command {} '{raw}': {cmd} takes no number, got '{extra}' (allowed: {HELP})",
                i + 1
            )));
        }
        match cmd.as_str() {
            "reset" => q.reset(),
            "arrival" => q
                .set_arrival(number("arrival")?)
                .map_err(|e| in_command(i, raw, e))?,
            "service" => q
                .set_service(number("service")?)
                .map_err(|e| in_command(i, raw, e))?,
            "step" => {
                let k = match arg {
                    None => 1,
                    Some(a) => a
                        .parse::<usize>()
                        .ok()
                        .filter(|k| *k <= MAX_STEPS)
                        .ok_or_else(|| {
                            Error::Lab(format!(
                                "command {} '{raw}': '{a}' is not a step count (allowed: 0..={MAX_STEPS})",
                                i + 1
                            ))
                        })?,
                };
                for _ in 0..k {
                    q.step();
                }
            }
            "predict" => q
                .predict(number("predict")?, 1.0)
                .map_err(|e| in_command(i, raw, e))?,
            "show" => {}
            _ => {
                return Err(Error::Lab(format!(
                    "command {} '{raw}': unknown command '{cmd}' (allowed: {HELP})",
                    i + 1
                )));
            }
        }
        out.push(format!("{raw:<12} -> {}", q.state_line()));
        if let Some((p, a)) = q.verdict.take() {
            out.push(format!(
                "             prediction {} vs backlog {}: {}",
                num(p),
                num(a),
                if (p - a).abs() < 1e-9 { "right" } else { "off" }
            ));
        }
    }
    out.push(format!("backlog {}", num(q.backlog)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab() -> Queue {
        Queue::new(0.5, 4.0).unwrap()
    }

    #[test]
    fn exercises_through_the_script() {
        let out = run(
            &mut lab(),
            "reset; arrival 3; service 2; predict 5; step; step; show",
        )
        .unwrap();
        assert_eq!(out[0], DISCLAIMER);
        assert_eq!(out.last().unwrap(), "backlog 5");
        assert!(
            out.iter()
                .any(|l| l.contains("prediction 5 vs backlog 5: right"))
        );
        let out = run(&mut lab(), "reset\narrival 3\nservice 4\nstep 2").unwrap();
        assert_eq!(out.last().unwrap(), "backlog 3");
        assert_eq!(out.iter().filter(|l| l.contains(DISCLAIMER)).count(), 1);
    }

    #[test]
    fn bad_commands_name_the_command() {
        let e = run(&mut lab(), "reset; jump 3").unwrap_err().to_string();
        assert!(
            e.contains("command 2 'jump 3'") && e.contains("unknown command"),
            "{e}"
        );
        let e = run(&mut lab(), "arrival x").unwrap_err().to_string();
        assert!(e.contains("'x' is not a number"), "{e}");
        let e = run(&mut lab(), "service -2").unwrap_err().to_string();
        assert!(
            e.contains("command 1 'service -2'") && e.contains("from 0 to 1000000"),
            "{e}"
        );
        for (script, needle) in [
            (
                "arrival 1e308; step 1000",
                "from 0 to 1000000 tiles per second",
            ),
            ("reset 5", "reset takes no number, got '5'"),
            ("show extra", "show takes no number"),
            ("predict -1", "allowed a backlog from 0"),
            ("", "holds no command"),
            (";;; # only a comment", "holds no command"),
        ] {
            let e = run(&mut lab(), script).unwrap_err().to_string();
            assert!(e.contains(needle), "{script}: {e}");
        }
        let e = run(&mut lab(), "arrival").unwrap_err().to_string();
        assert!(e.contains("needs a number"), "{e}");
        let e = run(&mut lab(), "step 100000000000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allowed: 0..=1000000"), "{e}");
    }
}
