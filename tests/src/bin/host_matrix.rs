//! Runs every sample of `tests/host-matrix.ron` on every host and prints the table; with
//! `--write-readme` it also rewrites the table in README.md. `scripts/host-matrix.sh` calls this.
//!
//! Usage: `host-matrix [--write-readme] [--ci-only] [--hosts x86-64,aarch64] [--sample TEXT]`.
//! Generations and objects go to `target/host-matrix/`, so a second run reuses every object.

use std::collections::BTreeSet;
use std::fs;
use std::process::ExitCode;
use std::time::Instant;

use rpt_tests::matrix::{self, HOSTS, Row, Verdict};
use rpt_tests::workspace_root;

struct Options {
    write_readme: bool,
    ci_only: bool,
    hosts: Vec<String>,
    sample: Option<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        write_readme: false,
        ci_only: false,
        hosts: HOSTS.iter().map(|h| h.to_string()).collect(),
        sample: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--write-readme" => options.write_readme = true,
            "--ci-only" => options.ci_only = true,
            "--hosts" => {
                let list = args.next().ok_or("--hosts needs a comma-separated list")?;
                options.hosts = list.split(',').map(str::to_string).collect();
                if let Some(unknown) = options.hosts.iter().find(|h| !HOSTS.contains(&h.as_str())) {
                    return Err(format!("unknown host `{unknown}` (known: {})", HOSTS.join(", ")));
                }
            }
            "--sample" => options.sample = Some(args.next().ok_or("--sample needs text to match recipes")?),
            "-h" | "--help" => {
                return Err(
                    "usage: host-matrix [--write-readme] [--ci-only] [--hosts x86-64,aarch64] [--sample TEXT]".into(),
                );
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    let partial = options.ci_only || options.sample.is_some() || options.hosts.len() != HOSTS.len();
    if options.write_readme && partial {
        return Err("--write-readme needs the whole matrix: drop --ci-only, --sample and --hosts".into());
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("host-matrix: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("host-matrix: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the selected cells; true when every one passed.
fn run(options: &Options) -> Result<bool, String> {
    let work = workspace_root().join("target").join("host-matrix");
    let gen_dir = work.join("gen");
    let cache_dir = work.join("cache");
    let selected: BTreeSet<&str> = options.hosts.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    let mut all_passed = true;
    for sample in matrix::samples()? {
        if options.ci_only && !sample.ci {
            continue;
        }
        if options
            .sample
            .as_ref()
            .is_some_and(|s| !sample.recipe.contains(s.as_str()))
        {
            continue;
        }
        let guest = sample.guest()?;
        let scratch = tempfile::tempdir().map_err(|e| format!("a scratch directory: {e}"))?;
        let expected = matrix::run_oracle(&sample, scratch.path()).map_err(|e| format!("{}: {e}", sample.recipe))?;
        let mut cells = Vec::new();
        for host in HOSTS {
            if !selected.contains(host) {
                cells.push("-".to_string());
                continue;
            }
            let started = Instant::now();
            let verdict = matrix::run_on_host(&sample, host, &expected, &gen_dir, &cache_dir);
            let seconds = started.elapsed().as_secs_f64();
            match verdict {
                Verdict::Pass => {
                    eprintln!("{} on {host}: pass ({seconds:.1}s)", sample.recipe);
                    cells.push("pass".to_string());
                }
                Verdict::Fail(why) => {
                    eprintln!("{} on {host}: FAIL ({seconds:.1}s): {why}", sample.recipe);
                    cells.push("FAIL".to_string());
                    all_passed = false;
                }
            }
        }
        rows.push(Row {
            recipe: sample.recipe.clone(),
            guest,
            cells,
        });
    }
    let table = matrix::render_table(&rows);
    println!("{table}");
    if options.write_readme {
        let path = matrix::readme_path();
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let updated = matrix::replace_table(&text, &table)?;
        if updated != text {
            fs::write(&path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("host-matrix: rewrote the table in README.md");
        }
    }
    Ok(all_passed)
}
