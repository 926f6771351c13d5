//! What each command reads, for the one validation pass (`validate::check`) that runs before
//! any lock, journal write or network call.

use super::{CapabilitiesCommand, Command, Common, DnsCommand, SelectionArgs};

/// What each command reads, for the one validation pass.
pub(super) fn inputs_of(command: &Command) -> crate::validate::Inputs<'_> {
    use crate::validate::Inputs;
    fn assets(common: &Common) -> Inputs<'_> {
        Inputs {
            assets: Some(common.assets()),
            state_dir: Some(common.state.dir()),
            ..Inputs::default()
        }
    }
    /// A day-2 command: the asset dir when there is one (`Common::asset_dir_if_any`), else
    /// the cluster, whose documents the same loader checks once read (`day2`); the state dir
    /// when given (its default then follows from the cluster's infra id).
    fn day2(common: &Common) -> Inputs<'_> {
        match common.asset_dir_if_any() {
            Some(dir) => Inputs {
                assets: Some(dir),
                state_dir: Some(common.state.dir()),
                ..Inputs::default()
            },
            None => Inputs {
                state_dir: common.state.state_dir.as_deref(),
                ..Inputs::default()
            },
        }
    }
    /// A command that takes the state dir's lock (`Context::open`): the lock file too.
    fn locked(common: &Common) -> Inputs<'_> {
        Inputs {
            locks_state_dir: true,
            ..assets(common)
        }
    }
    match command {
        Command::Plan {
            common,
            templates,
            registry,
            ..
        } => Inputs {
            renders: true,
            templates: templates.as_deref(),
            registry: Some(registry),
            ..assets(common)
        },
        Command::Teardown {
            common,
            all: true,
            kubeconfig: Some(kubeconfig),
            templates,
        } => Inputs {
            kubeconfig: Some(kubeconfig.as_path()),
            renders: true,
            templates: templates.as_deref(),
            ..locked(common)
        },
        Command::Reserve { common }
        | Command::PublishLbIps { common }
        | Command::Teardown { common, .. }
        | Command::Dns {
            command: DnsCommand::Seed { common, .. } | DnsCommand::Teardown { common, .. },
        } => locked(common),
        Command::Dns {
            command: DnsCommand::Verify { common, .. } | DnsCommand::Records { common },
        } => assets(common),
        Command::Gather(args) => Inputs {
            templates: args.templates.as_deref(),
            // A support bundle is wanted most when the journal is broken: it collects it as is.
            state_dir: None,
            ..day2(&args.common)
        },
        Command::Render { common, templates } => Inputs {
            renders: true,
            templates: templates.as_deref(),
            ..assets(common)
        },
        Command::Apply { common, kube } => Inputs {
            kubeconfig: Some(kube.kubeconfig.as_path()),
            renders: true,
            templates: kube.templates.as_deref(),
            ..assets(common)
        },
        Command::Wait { common, kube, gate } => Inputs {
            kubeconfig: Some(kube.kubeconfig.as_path()),
            renders: true,
            templates: kube.templates.as_deref(),
            done_file: gate.done_file.as_deref(),
            ..locked(common)
        },
        Command::Run(args) => Inputs {
            kubeconfig: Some(args.kube.kubeconfig.as_path()),
            renders: true,
            templates: args.kube.templates.as_deref(),
            registry: Some(&args.registry),
            cvo_overrides: true,
            done_file: args.gate.done_file.as_deref(),
            skip_preflight: &args.preflight.skip,
            ..locked(&args.common)
        },
        Command::Publish(args) => Inputs {
            kubeconfig: Some(args.kube.kubeconfig.as_path()),
            renders: true,
            templates: args.kube.templates.as_deref(),
            // `--dry-run` only reads.
            locks_state_dir: !args.dry_run,
            ..day2(&args.common)
        },
        Command::Preflight(args) => Inputs {
            kubeconfig: args.kubeconfig.as_deref(),
            templates: args.templates.as_deref(),
            skip_preflight: &args.preflight.skip,
            ..assets(&args.common)
        },
        Command::Capabilities { command } => capabilities_inputs(command),
        Command::Permissions(args) => Inputs {
            assets: args.assets.as_deref(),
            ..Inputs::default()
        },
        Command::Status { .. }
        | Command::Pause { .. }
        | Command::Resume { .. }
        | Command::Manifests { .. } => Inputs::default(),
    }
}

fn capabilities_inputs(command: &CapabilitiesCommand) -> crate::validate::Inputs<'_> {
    use crate::validate::Inputs;
    fn selection(s: &SelectionArgs) -> Inputs<'_> {
        Inputs {
            assets: s.assets.as_deref(),
            registry: Some(&s.registry),
            ..Inputs::default()
        }
    }
    match command {
        CapabilitiesCommand::Validate {
            assets, registry, ..
        } => Inputs {
            assets: Some(assets.as_path()),
            registry: Some(registry),
            ..Inputs::default()
        },
        CapabilitiesCommand::Apply {
            assets,
            kubeconfig,
            registry,
            ..
        } => Inputs {
            assets: Some(assets.as_path()),
            kubeconfig: Some(kubeconfig.as_path()),
            registry: Some(registry),
            ..Inputs::default()
        },
        CapabilitiesCommand::Filter {
            selection: s,
            manifests,
            ..
        } => Inputs {
            manifest_dirs: vec![manifests.as_path()],
            ..selection(s)
        },
        CapabilitiesCommand::Upgrade {
            selection: s,
            from,
            to,
            kubeconfig,
            ..
        } => Inputs {
            manifest_dirs: vec![from.as_path(), to.as_path()],
            kubeconfig: kubeconfig.as_deref(),
            ..selection(s)
        },
    }
}
