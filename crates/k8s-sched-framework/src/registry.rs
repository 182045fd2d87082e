//! The plugin [`Registry`]: plugin name -> factory that builds the plugin from its args (upstream
//! `pkg/scheduler/framework/runtime/registry.go`, `pkg/scheduler/framework/plugins/registry.go`).
//! Out-of-tree plugins are registered the same way and merged with the in-tree registry
//! (upstream `WithFrameworkOutOfTreeRegistry`). [`Registry::describe`] shows what a registered
//! plugin implements: its extension points (including PreBind and PostBind) and the cluster
//! events it registers for queueing hints.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::error::ConfigError;
use crate::events::ClusterEventWithHint;
use crate::extension_point::ExtensionPoint;
use crate::interface::Plugin;

/// What a factory receives: the plugin name, its args from `pluginConfig` (if any) and the field
/// path of those args for error messages (`profiles[0].pluginConfig[1].args`).
#[derive(Clone, Debug)]
pub struct PluginArgs<'a> {
    /// The plugin's registry name.
    pub name: &'a str,
    /// The raw args, if the profile has a `pluginConfig` entry for the plugin.
    pub args: Option<&'a serde_json::Value>,
    /// Field path of the args.
    pub path: String,
}

impl PluginArgs<'_> {
    /// Decodes the args into `T` (unknown fields ignored); `T::default()` when there are none.
    ///
    /// # Errors
    /// [`ConfigError::Decode`] with the full field path of the bad value.
    pub fn decode<T: DeserializeOwned + Default>(&self) -> Result<T, ConfigError> {
        let Some(v) = self.args else {
            return Ok(T::default());
        };
        if v.is_null() {
            return Ok(T::default());
        }
        serde_path_to_error::deserialize(v).map_err(|e| {
            let inner = e.path().to_string();
            let path = if inner.is_empty() || inner == "." {
                self.path.clone()
            } else {
                format!("{}.{}", self.path, inner)
            };
            ConfigError::Decode {
                path,
                message: e.inner().to_string(),
            }
        })
    }

    /// `Ok(())` when `errors` is empty, else [`ConfigError::Invalid`].
    ///
    /// # Errors
    /// The field errors.
    pub fn check(&self, errors: Vec<k8s_types::status::FieldError>) -> Result<(), ConfigError> {
        match ConfigError::from_field_errors(errors) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Builds a plugin instance from its args (one instance per profile, shared by the extension
/// points it is enabled at).
pub type PluginFactory =
    Box<dyn Fn(&PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> + Send + Sync>;

/// Plugin name -> factory, in name order.
#[derive(Default)]
pub struct Registry {
    factories: BTreeMap<String, PluginFactory>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}

impl Registry {
    /// An empty registry (for out-of-tree plugins).
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds a factory under `name`.
    ///
    /// # Errors
    /// [`ConfigError::Framework`] `a plugin named <name> already exists` (upstream `Registry.Register`).
    pub fn register(
        &mut self,
        name: impl Into<String>,
        factory: PluginFactory,
    ) -> Result<(), ConfigError> {
        let name = name.into();
        if self.factories.contains_key(&name) {
            return Err(ConfigError::Framework(format!(
                "a plugin named {name} already exists"
            )));
        }
        self.factories.insert(name, factory);
        Ok(())
    }

    /// Moves every factory of `other` into `self` (upstream `Registry.Merge`).
    ///
    /// # Errors
    /// As [`Registry::register`] on a duplicate name.
    pub fn merge(&mut self, other: Registry) -> Result<(), ConfigError> {
        for (name, f) in other.factories {
            self.register(name, f)?;
        }
        Ok(())
    }

    /// True when a factory is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains_key(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.factories.keys().map(String::as_str)
    }

    /// The extension points plugin `name` implements, in upstream order (PreEnqueue ...
    /// PreBind, Bind, PostBind), and the cluster events it registers for queueing hints
    /// (every resource without hints when it does not implement `EnqueueExtensions`). The plugin
    /// is built with default args.
    ///
    /// # Errors
    /// As [`Registry::build`].
    pub fn describe(
        &self,
        name: &str,
    ) -> Result<(Vec<ExtensionPoint>, Vec<ClusterEventWithHint>), ConfigError> {
        let plugin = self.build(&PluginArgs {
            name,
            args: None,
            path: String::new(),
        })?;
        let points = ExtensionPoint::ALL
            .into_iter()
            .filter(|e| e.implemented_by(plugin.as_ref()))
            .collect();
        let events = match plugin.as_enqueue_extensions() {
            Some(ext) => ext.events_to_register(),
            None => ClusterEventWithHint::unroll_wildcard_resource(),
        };
        Ok((points, events))
    }

    /// Builds the plugin `name`.
    ///
    /// # Errors
    /// The factory's error, or [`ConfigError::Framework`] when `name` is not registered.
    pub fn build(&self, args: &PluginArgs<'_>) -> Result<Arc<dyn Plugin>, ConfigError> {
        match self.factories.get(args.name) {
            Some(f) => f(args),
            None => Err(ConfigError::Framework(format!(
                "plugin {:?} does not exist",
                args.name
            ))),
        }
    }
}
