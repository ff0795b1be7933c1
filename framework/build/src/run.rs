//! Running a built binary natively or under an emulator.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};

use rpt_api::Runner;

use crate::BuildError;

/// The command that runs `binary` with `args` under `runner`.
fn command(runner: &Runner, binary: &Path, args: &[String]) -> Result<(Command, String), BuildError> {
    // A bare file name would be looked up on PATH; make it a path.
    let binary: PathBuf = if binary.is_absolute() {
        binary.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(BuildError::io("read the current directory"))?
            .join(binary)
    };
    let (mut cmd, program) = match runner {
        Runner::Native => (Command::new(&binary), binary.display().to_string()),
        Runner::Emulator {
            program,
            args: emulator_args,
        } => {
            let mut cmd = Command::new(program);
            cmd.args(emulator_args).arg(&binary);
            (cmd, program.clone())
        }
    };
    cmd.args(args);
    Ok((cmd, program))
}

/// Runs a binary with the terminal's stdin, stdout and stderr and `env` added to the environment
/// (an emulator passes it on to the program), and waits for it.
pub fn run(runner: &Runner, binary: &Path, args: &[String], env: &[(&str, &OsStr)]) -> Result<ExitStatus, BuildError> {
    let (mut cmd, program) = command(runner, binary, args)?;
    cmd.envs(env.iter().copied());
    cmd.status().map_err(|source| BuildError::Run { program, source })
}

/// Runs a binary with no stdin and captures its stdout and stderr (for tests and oracles).
pub fn run_captured(runner: &Runner, binary: &Path, args: &[String]) -> Result<Output, BuildError> {
    let (mut cmd, program) = command(runner, binary, args)?;
    cmd.stdin(Stdio::null())
        .output()
        .map_err(|source| BuildError::Run { program, source })
}
