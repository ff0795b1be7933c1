//! The plugin registry: guests, hosts and passes by name.
//!
//! Built-in plugins are registered by the CLI through the same calls a
//! dynamically loaded plugin will use, so nothing here assumes a plugin is
//! linked into rpt.

use std::collections::BTreeMap;
use std::sync::Arc;

use rpt_api::{GuestPlugin, HostPlugin, PassPlugin, Plugin, PluginInfo};

/// Every plugin rpt can use in this process, by name.
#[derive(Clone, Default)]
pub struct Registry {
    guests: BTreeMap<String, Arc<dyn GuestPlugin>>,
    hosts: BTreeMap<String, Arc<dyn HostPlugin>>,
    passes: BTreeMap<String, Arc<dyn PassPlugin>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds a plugin under its own name, replacing any earlier one of that kind and name.
    pub fn add(&mut self, plugin: Plugin) {
        match plugin {
            Plugin::Guest(guest) => self.add_guest(guest),
            Plugin::Host(host) => self.add_host(host),
            Plugin::Pass(pass) => self.add_pass(pass),
        }
    }

    /// Adds a guest under its own name, replacing any earlier one of that name.
    pub fn add_guest(&mut self, guest: Arc<dyn GuestPlugin>) {
        self.guests.insert(guest.info().name, guest);
    }

    /// Adds a host under its own name.
    pub fn add_host(&mut self, host: Arc<dyn HostPlugin>) {
        self.hosts.insert(host.info().name, host);
    }

    /// Adds a pass under its own name.
    pub fn add_pass(&mut self, pass: Arc<dyn PassPlugin>) {
        self.passes.insert(pass.info().name, pass);
    }

    /// The guest with this name.
    pub fn guest(&self, name: &str) -> Option<&Arc<dyn GuestPlugin>> {
        self.guests.get(name)
    }

    /// The host with this name.
    pub fn host(&self, name: &str) -> Option<&Arc<dyn HostPlugin>> {
        self.hosts.get(name)
    }

    /// The pass with this name.
    pub fn pass(&self, name: &str) -> Option<&Arc<dyn PassPlugin>> {
        self.passes.get(name)
    }

    /// Names of the registered guests, sorted.
    pub fn guest_names(&self) -> Vec<String> {
        self.guests.keys().cloned().collect()
    }

    /// Names of the registered hosts, sorted.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.keys().cloned().collect()
    }

    /// Names of the registered passes, sorted.
    pub fn pass_names(&self) -> Vec<String> {
        self.passes.keys().cloned().collect()
    }

    /// Identities of every registered plugin, sorted by name within each kind.
    pub fn identities(&self) -> Vec<PluginInfo> {
        let mut out: Vec<PluginInfo> = self.guests.values().map(|g| g.info()).collect();
        out.extend(self.hosts.values().map(|h| h.info()));
        out.extend(self.passes.values().map(|p| p.info()));
        out
    }
}
