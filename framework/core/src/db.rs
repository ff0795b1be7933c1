//! The salsa database and its inputs.

use std::sync::Arc;

use rpt_ir::GuestAddr;
use rpt_recipe::Recipe;

use crate::Registry;

/// What queries may ask of the database beyond salsa itself: the plugins.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The plugins of this process.
    fn registry(&self) -> &Registry;
}

/// The concrete database. Cloning is cheap (it shares storage), which is how
/// parallel workers each get a handle.
#[salsa::db]
#[derive(Clone)]
pub struct RptDb {
    registry: Arc<Registry>,
    storage: salsa::Storage<Self>,
}

impl RptDb {
    /// A fresh database over these plugins.
    pub fn new(registry: Registry) -> RptDb {
        RptDb {
            registry: Arc::new(registry),
            storage: salsa::Storage::default(),
        }
    }

    /// A fresh database that reports every query execution to `on_execute` (for tests that assert reuse).
    pub fn with_execution_log(registry: Registry, on_execute: impl Fn(String) + Send + Sync + 'static) -> RptDb {
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                on_execute(format!("{database_key:?}"));
            }
        })));
        RptDb {
            registry: Arc::new(registry),
            storage,
        }
    }
}

#[salsa::db]
impl salsa::Database for RptDb {}

#[salsa::db]
impl Db for RptDb {
    fn registry(&self) -> &Registry {
        &self.registry
    }
}

/// One recompilation: a parsed recipe and its guest image.
///
/// The image is set with high durability: a recipe edit then skips revalidating
/// everything that depends only on the image.
#[salsa::input(debug)]
pub struct Session {
    /// The recipe, already parsed and validated.
    #[returns(ref)]
    pub recipe: Recipe,
    /// The guest image's bytes, its hash already checked against the recipe.
    #[returns(ref)]
    pub image: Arc<[u8]>,
    /// The listing file's name as `#line` directives name it (`demo-x86.lst`).
    #[returns(ref)]
    pub listing_name: String,
}

/// A function of the guest, by entry address; interned so queries can be keyed on it.
#[salsa::interned(debug)]
pub struct FunctionId<'db> {
    /// The entry address.
    #[returns(copy)]
    pub addr: GuestAddr,
}
