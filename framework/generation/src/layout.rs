//! Where generations are and what they are called: the project's `gen/` and `archive/`, a
//! generation's name, and the directories inside one.
//!
//! ```text
//! <project>/recipes/<recipe>.ron
//! <project>/gen/<recipe>/<digest16>-<host>/   one generation
//!     manifest.ron
//!     src/            generated C, the listing, IR shards, guest C part
//!     src/runtime/    the C runtime (and a freestanding host's shim beside it)
//!     src/overrides/  the recipe's own C files
//!     obj/            objects (a cache, not part of the generation)
//!     bin/<recipe>    the binary
//! <project>/gen/<recipe>/rebuild-<id>/        what `rpt build` rebuilds
//! <project>/archive/<recipe>/vN/              promoted generations (rpt-archive)
//! ```

use std::path::{Path, PathBuf};

use rpt_archive::{MANIFEST_FILE, Manifest};
use rpt_recipe::Recipe;

use crate::GenerationError;
use crate::select::Selection;

/// A generation's sources, relative to it.
pub const SOURCES_DIR: &str = "src";

/// Where a recipe's own C files (override bodies and their headers) go, relative to `src/`.
pub const OVERRIDES_DIR: &str = "overrides";

/// Where objects go, relative to a generation (or a rebuild's output directory).
pub const OBJECTS_DIR: &str = "obj";

/// Where the binary goes, relative to a generation.
pub const BINARY_DIR: &str = "bin";

/// The compiler's include directories, relative to a generation; the manifest records them.
pub const INCLUDE_DIRS: &[&str] = &["src", "src/runtime", "src/guest"];

/// The project folder of a recipe: recipes normally live in a project's `recipes/` folder, and
/// `gen/` and `archive/` go beside it; a recipe elsewhere counts its own folder as the project.
pub fn project_dir(recipe_path: &Path) -> PathBuf {
    let dir = recipe_path.parent().unwrap_or(Path::new(""));
    let project = if dir.file_name().is_some_and(|n| n == "recipes") {
        dir.parent().unwrap_or(Path::new(""))
    } else {
        dir
    };
    project.to_path_buf()
}

/// Where a recipe's generations go unless a command says otherwise: `gen/` in its project.
pub fn default_gen_root(recipe_path: &Path) -> PathBuf {
    project_dir(recipe_path).join("gen")
}

/// Where a recipe's archive goes unless a command says otherwise: `archive/` in its project.
pub fn default_archive_root(recipe_path: &Path) -> PathBuf {
    project_dir(recipe_path).join("archive")
}

/// The recipe's name, which names its folders in `gen/` and `archive/` and its binary: the file
/// name without `.ron`.
pub fn recipe_name(recipe_path: &Path) -> Result<String, GenerationError> {
    recipe_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| GenerationError::RecipeName(recipe_path.to_path_buf()))
}

/// The name of the generation an (effective) recipe builds: the first 16 hex digits of its digest,
/// `-`, its host. Generations of one recipe for different hosts or settings sit side by side.
pub fn generation_name(recipe: &Recipe) -> String {
    name_of(&rpt_recipe::digest(recipe, &recipe.image_sha256), &recipe.host)
}

/// The name of the generation a manifest describes (the same as [`generation_name`] of the recipe
/// it was built from).
pub fn manifest_generation_name(manifest: &Manifest) -> String {
    name_of(&manifest.recipe_digest, &manifest.host)
}

fn name_of(digest: &str, host: &str) -> String {
    format!("{}-{host}", digest.get(..16).unwrap_or(digest))
}

/// One generation's directory and the places in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationDir {
    dir: PathBuf,
    recipe_name: String,
}

impl GenerationDir {
    /// The generation of the effective `recipe` (named `recipe_name`) among the generations in `gen_root`.
    pub fn new(gen_root: &Path, recipe_name: &str, recipe: &Recipe) -> GenerationDir {
        GenerationDir {
            dir: recipe_generations(gen_root, recipe_name).join(generation_name(recipe)),
            recipe_name: recipe_name.to_string(),
        }
    }

    /// The generation directory itself.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The recipe's name.
    pub fn recipe_name(&self) -> &str {
        &self.recipe_name
    }

    /// `src/`.
    pub fn sources(&self) -> PathBuf {
        self.dir.join(SOURCES_DIR)
    }

    /// The binary, `bin/<recipe>`.
    pub fn binary(&self) -> PathBuf {
        self.dir.join(binary_path(&self.recipe_name))
    }

    /// Whether the generation has been written (it has its manifest).
    pub fn exists(&self) -> bool {
        self.dir.join(MANIFEST_FILE).is_file()
    }
}

/// The binary of recipe `recipe_name`, relative to its generation (as the manifest records it).
pub fn binary_path(recipe_name: &str) -> String {
    format!("{BINARY_DIR}/{recipe_name}")
}

/// The folder holding every generation of recipe `recipe_name`: `gen/<recipe>`.
pub fn recipe_generations(gen_root: &Path, recipe_name: &str) -> PathBuf {
    gen_root.join(recipe_name)
}

/// The generation of the recipe file as it is now, built with `selection`, which must exist: what
/// `promote` means without `--generation`. It is named exactly as `recompile` with the same
/// selection names it, because both go through [`crate::effective_recipe_with_coverage`].
pub fn current_generation(
    gen_root: &Path,
    recipe_path: &Path,
    selection: &Selection,
) -> Result<GenerationDir, GenerationError> {
    let text = std::fs::read_to_string(recipe_path)
        .map_err(GenerationError::io(format!("reading {}", recipe_path.display())))?;
    let recipe = rpt_recipe::parse(recipe_path, &text)?;
    let (effective, _) = crate::effective_recipe_with_coverage(recipe, selection, gen_root, recipe_path)?;
    let generation = GenerationDir::new(gen_root, &recipe_name(recipe_path)?, &effective.recipe);
    if !generation.exists() {
        return Err(GenerationError::NoCurrent {
            recipe: recipe_path.to_path_buf(),
            dir: generation.path().to_path_buf(),
        });
    }
    Ok(generation)
}

/// The generation of recipe `recipe_name` that `id` names: a path to a generation, or the name
/// of one in `gen/<recipe>/`, or a prefix of exactly one such name.
pub fn named_generation(gen_root: &Path, recipe_name: &str, id: &str) -> Result<PathBuf, GenerationError> {
    let as_path = PathBuf::from(id);
    if as_path.join(MANIFEST_FILE).is_file() {
        return Ok(as_path);
    }
    let dir = recipe_generations(gen_root, recipe_name);
    let mut known = Vec::new();
    // A recipe without generations yet has no folder; that is the same as an empty one.
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            if entry.path().join(MANIFEST_FILE).is_file() {
                known.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    known.sort();
    let mut matching: Vec<String> = known.iter().filter(|k| k.starts_with(id)).cloned().collect();
    match matching.len() {
        1 => Ok(dir.join(matching.remove(0))),
        0 => Err(GenerationError::NoSuchGeneration {
            id: id.to_string(),
            dir,
            known,
        }),
        _ => Err(GenerationError::Ambiguous {
            id: id.to_string(),
            dir,
            matching,
        }),
    }
}

/// Where `rpt build` rebuilds the generation or archived version `generation` of recipe
/// `recipe_name` by default: `gen/<recipe>/rebuild-<id>` in the project holding
/// `archive/<recipe>/<id>` (or `gen/<recipe>/<id>`); `None` when the path is not laid out so.
pub fn default_rebuild_dir(generation: &Path, recipe_name: &str) -> Option<PathBuf> {
    let id = generation.file_name()?.to_string_lossy().into_owned();
    let recipe_dir = generation.parent()?;
    if recipe_dir.file_name()? != recipe_name {
        return None;
    }
    let project = recipe_dir.parent()?.parent()?;
    Some(recipe_generations(&project.join("gen"), recipe_name).join(format!("rebuild-{id}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{effective_recipe, select as selection};

    /// The demo recipe, with the workspace's image path, as recipes/demo-x86.ron has it.
    fn demo_text() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes/demo-x86.ron");
        std::fs::read_to_string(&path).expect("the demo recipe")
    }

    #[test]
    fn promote_finds_the_generation_recompile_writes_for_every_selection() {
        let project = tempfile::tempdir().expect("tempdir");
        let recipe_path = project.path().join("recipes/demo-x86.ron");
        std::fs::create_dir_all(recipe_path.parent().expect("folder")).expect("mkdir");
        std::fs::write(&recipe_path, demo_text()).expect("write recipe");
        let gen_root = default_gen_root(&recipe_path);
        assert_eq!(gen_root, project.path().join("gen"));
        let recipe = rpt_recipe::parse(&recipe_path, &demo_text()).expect("the demo recipe parses");
        let selections = [
            selection(None, None, None),
            selection(Some("aarch64"), None, None),
            selection(Some("loongarch64"), None, None),
            selection(Some("aarch64"), Some("cortex-a72"), Some(&["flag-abi", "memarg"])),
            selection(None, Some("znver3"), Some(&[])),
        ];
        for chosen in &selections {
            // What recompile does: the effective recipe names the directory it writes.
            let effective = effective_recipe(recipe.clone(), chosen).expect("effective recipe");
            let written = GenerationDir::new(&gen_root, "demo-x86", &effective.recipe);
            assert!(
                written
                    .path()
                    .ends_with(format!("gen/demo-x86/{}", effective.generation_name())),
                "{}",
                written.path().display()
            );
            let e = current_generation(&gen_root, &recipe_path, chosen).expect_err("nothing written yet");
            assert!(matches!(e, GenerationError::NoCurrent { .. }), "{e}");
            std::fs::create_dir_all(written.path()).expect("mkdir");
            std::fs::write(written.path().join(MANIFEST_FILE), "()").expect("manifest");
            // What promote does with the same flags finds exactly that directory.
            let found = current_generation(&gen_root, &recipe_path, chosen).expect("promote finds it");
            assert_eq!(found, written, "{chosen:?}");
        }
    }

    #[test]
    fn a_generation_is_named_by_a_path_a_name_or_a_unique_prefix() {
        let gen_root = tempfile::tempdir().expect("tempdir");
        for name in [
            "0123456789abcdef-x86-64",
            "0123456789abcdef-aarch64",
            "fedcba9876543210-x86-64",
        ] {
            let dir = gen_root.path().join("demo").join(name);
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(MANIFEST_FILE), "()").expect("manifest");
        }
        let root = gen_root.path();
        assert_eq!(
            named_generation(root, "demo", "fed").expect("a unique prefix"),
            root.join("demo/fedcba9876543210-x86-64")
        );
        let by_path = root.join("demo/0123456789abcdef-aarch64");
        assert_eq!(
            named_generation(root, "demo", &by_path.display().to_string()).expect("a path"),
            by_path
        );
        let e = named_generation(root, "demo", "0123").expect_err("two match");
        assert!(e.to_string().contains("names several generations"), "{e}");
        let e = named_generation(root, "demo", "nosuch").expect_err("none match");
        assert!(e.to_string().contains("there: 0123456789abcdef-aarch64, "), "{e}");
        let e = named_generation(root, "other", "0").expect_err("no generations at all");
        assert!(e.to_string().ends_with("(there: none)"), "{e}");
    }

    #[test]
    fn rebuilds_go_beside_the_generations_of_the_project() {
        assert_eq!(
            default_rebuild_dir(Path::new("p/archive/demo/v3"), "demo"),
            Some(PathBuf::from("p/gen/demo/rebuild-v3"))
        );
        assert_eq!(default_rebuild_dir(Path::new("p/archive/other/v3"), "demo"), None);
    }
}
