//! Progress bars on standard error, hidden when it is not a terminal.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ProgressMode;

/// One bar per stage, created on first use.
pub struct Bars {
    multi: MultiProgress,
    current: Mutex<Option<(String, ProgressBar)>>,
}

impl Bars {
    /// Bars drawn according to `mode`.
    pub fn new(mode: ProgressMode) -> Bars {
        let hidden = match mode {
            ProgressMode::Never => true,
            ProgressMode::Always => false,
            ProgressMode::Auto => std::env::var_os("CI").is_some() || !std::io::stderr().is_terminal(),
        };
        let multi = if hidden {
            MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
        } else {
            MultiProgress::new()
        };
        Bars {
            multi,
            current: Mutex::new(None),
        }
    }

    /// Reports `done` of `total` items of a stage; a new stage name starts a new bar.
    pub fn update(&self, stage: &str, done: usize, total: usize) {
        let Ok(mut current) = self.current.lock() else { return };
        let needs_new = current.as_ref().is_none_or(|(name, _)| name != stage);
        if needs_new {
            if let Some((_, bar)) = current.take() {
                bar.finish();
            }
            let style = ProgressStyle::with_template("{prefix:>9} [{elapsed_precise}] {wide_bar} {pos}/{len}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            let bar = self.multi.add(
                ProgressBar::new(total as u64)
                    .with_style(style)
                    .with_prefix(stage.to_string()),
            );
            *current = Some((stage.to_string(), bar));
        }
        if let Some((_, bar)) = current.as_ref() {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }

    /// Finishes and removes every bar, so the summary prints cleanly.
    pub fn clear(&self) {
        if let Ok(mut current) = self.current.lock()
            && let Some((_, bar)) = current.take()
        {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}
