//! Building the C programs of tests: native harnesses that run guest code on the real CPU or
//! under an emulator, and drivers that run compiled cases.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run_tool;

/// A C compiler and its flags, for building one test program.
#[derive(Clone, Debug)]
pub struct CCompiler<'a> {
    /// The compiler's command (`gcc`, `clang-19`, `powerpc-linux-gnu-gcc`).
    pub command: &'a str,
    /// Flags for compiling each file.
    pub cflags: &'a [&'a str],
    /// Flags for linking the objects.
    pub ldflags: &'a [&'a str],
    /// What to install when the compiler is missing or fails, for the test's message.
    pub hint: &'a str,
}

impl CCompiler<'_> {
    /// Compiles every file of `sources` (paths relative to `dir`, or absolute) on its own, all at
    /// once so that the machine's cores share the work, then links the objects into `dir/name`;
    /// panics with the compiler's messages and the hint when a step fails.
    pub fn build(&self, dir: &Path, sources: &[impl AsRef<Path>], name: &str) -> PathBuf {
        let compiles: Vec<_> = sources
            .iter()
            .enumerate()
            .map(|(i, source)| {
                let source = source.as_ref();
                let stem = source
                    .file_stem()
                    .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
                let object = dir.join(format!("{name}-{i}-{stem}.o"));
                let mut cmd = Command::new(self.command);
                cmd.current_dir(dir)
                    .args(self.cflags)
                    .arg("-c")
                    .arg(source)
                    .arg("-o")
                    .arg(&object);
                let hint = format!("compiling {}: {}", source.display(), self.hint);
                (std::thread::spawn(move || run_tool(&mut cmd, b"", &hint)), object)
            })
            .collect();
        let objects: Vec<PathBuf> = compiles
            .into_iter()
            .map(|(compile, object)| {
                if let Err(panic) = compile.join() {
                    std::panic::resume_unwind(panic);
                }
                object
            })
            .collect();
        let exe = dir.join(name);
        run_tool(
            Command::new(self.command)
                .current_dir(dir)
                .args(&objects)
                .args(self.ldflags)
                .arg("-o")
                .arg(&exe),
            b"",
            &format!("linking {name}: {}", self.hint),
        );
        exe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_of_two_files_builds_and_runs() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(
            dir.path().join("main.c"),
            "int twice(int);\nint main(void) { return twice(21); }\n",
        )
        .expect("write main.c");
        std::fs::write(dir.path().join("twice.c"), "int twice(int x) { return 2 * x; }\n").expect("write twice.c");
        let cc = CCompiler {
            command: "cc",
            cflags: &["-O1"],
            ldflags: &[],
            hint: "a C compiler",
        };
        let exe = cc.build(dir.path(), &["main.c", "twice.c"], "answer");
        let status = Command::new(exe).status().expect("the program runs");
        assert_eq!(status.code(), Some(42));
    }
}
