//! A generator of realistic release payloads for the capability filter: CVO file names
//! (`0000_<runlevel>_<component>_<nn>_<kind>.yaml`), multi-document files, and a mix of
//! profile, capability (single and `a+b`, some unknown), feature-set, feature-gate, exclude
//! and delete annotations. Deterministic for a seed (a small LCG; no dependency).
#![allow(dead_code)]

use std::path::Path;

pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6364136223846793005).wrapping_add(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

const COMPONENTS: &[&str] = &[
    "cluster-version-operator",
    "config-operator",
    "etcd-operator",
    "kube-apiserver-operator",
    "console-operator",
    "insights-operator",
    "cluster-samples-operator",
    "marketplace-operator",
    "cluster-image-registry-operator",
    "cluster-storage-operator",
    "cluster-node-tuning-operator",
    "machine-api-operator",
    "cluster-baremetal-operator",
    "operator-lifecycle-manager",
    "cloud-credential-operator",
    "ingress-operator",
    "cluster-cloud-controller-manager-operator",
    "cluster-monitoring-operator",
];

const CAPABILITIES: &[&str] = &[
    "Console",
    "Insights",
    "openshift-samples",
    "marketplace",
    "ImageRegistry",
    "Storage",
    "CSISnapshot",
    "NodeTuning",
    "MachineAPI",
    "baremetal",
    "OperatorLifecycleManager",
    "CloudCredential",
    "Ingress",
    "CloudControllerManager",
    "Build",
    "DeploymentConfig",
];

/// Adds the annotation `key: value` with probability `percent`/100.
fn sometimes<'a>(
    rng: &mut Lcg,
    percent: u64,
    annotations: &mut Vec<(&'a str, &'a str)>,
    key: &'a str,
    value: &'a str,
) {
    if rng.chance(percent) {
        annotations.push((key, value));
    }
}

fn annotations(rng: &mut Lcg) -> String {
    let mut a = Vec::new();
    for (percent, profile) in [
        (
            92,
            "include.release.openshift.io/self-managed-high-availability",
        ),
        (60, "include.release.openshift.io/single-node-developer"),
        (40, "include.release.openshift.io/hypershift"),
    ] {
        sometimes(rng, percent, &mut a, profile, "\"true\"");
    }
    let cap;
    if rng.chance(35) {
        cap = if rng.chance(15) {
            format!("{}+{}", rng.pick(CAPABILITIES), rng.pick(CAPABILITIES))
        } else if rng.chance(3) {
            "FutureCapability".to_string()
        } else {
            rng.pick(CAPABILITIES).to_string()
        };
        a.push(("capability.openshift.io/name", cap.as_str()));
    }
    if rng.chance(6) {
        a.push((
            "release.openshift.io/feature-set",
            rng.pick(&[
                "TechPreviewNoUpgrade",
                "Default",
                "TechPreviewNoUpgrade,DevPreviewNoUpgrade",
                "CustomNoUpgrade,TechPreviewNoUpgrade,DevPreviewNoUpgrade",
            ]),
        ));
    }
    if rng.chance(3) {
        a.push((
            "release.openshift.io/feature-gate",
            rng.pick(&["ClusterAPI", "CompatibilityRequirements,ClusterAPI"]),
        ));
    }
    sometimes(
        rng,
        3,
        &mut a,
        "exclude.release.openshift.io/internal-openshift-hosted",
        "\"true\"",
    );
    sometimes(rng, 1, &mut a, "release.openshift.io/delete", "\"true\"");
    sometimes(
        rng,
        20,
        &mut a,
        "kubernetes.io/description",
        "\"An object of a generated payload.\"",
    );
    let mut out = String::new();
    for (k, v) in a {
        out.push_str(&format!("    {k}: {v}\n"));
    }
    out
}

fn object(rng: &mut Lcg, component: &str, i: usize) -> String {
    let ns = format!("openshift-{}", component.trim_end_matches("-operator"));
    let ann = annotations(rng);
    let ann = if ann.is_empty() {
        String::new()
    } else {
        format!("  annotations:\n{ann}")
    };
    match rng.next() % 5 {
        0 => format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}-{i}\n{ann}  labels:\n    openshift.io/cluster-monitoring: \"true\"\n    openshift.io/run-level: \"\"\n"
        ),
        1 => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {component}-config-{i}\n  namespace: {ns}\n{ann}data:\n  config.yaml: |\n    apiVersion: operator.openshift.io/v1alpha1\n    kind: GenericOperatorConfig\n    leaderElection:\n      leaseDuration: 137s\n      renewDeadline: 107s\n    servingInfo:\n      bindAddress: 0.0.0.0:8443\n"
        ),
        2 => format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: system:openshift:operator:{component}-{i}\n{ann}roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: ServiceAccount\n  name: {component}\n  namespace: {ns}\n"
        ),
        3 => format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: metrics-{i}\n  namespace: {ns}\n{ann}  labels:\n    app: {component}\nspec:\n  ports:\n  - name: https\n    port: 443\n    protocol: TCP\n    targetPort: 8443\n  selector:\n    app: {component}\n  type: ClusterIP\n"
        ),
        _ => format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {component}-{i}\n  namespace: {ns}\n{ann}  labels:\n    app: {component}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {component}\n  strategy:\n    type: Recreate\n  template:\n    metadata:\n      annotations:\n        target.workload.openshift.io/management: '{{\"effect\": \"PreferredDuringScheduling\"}}'\n      labels:\n        app: {component}\n    spec:\n      serviceAccountName: {component}\n      priorityClassName: system-cluster-critical\n      containers:\n      - name: operator\n        image: quay.io/openshift/origin-{component}:latest\n        command: [\"{component}\", \"operator\"]\n        args:\n        - --config=/var/run/configmaps/config/config.yaml\n        - -v=2\n        env:\n        - name: RELEASE_VERSION\n          value: \"0.0.1-snapshot\"\n        - name: POD_NAME\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n        resources:\n          requests:\n            cpu: 10m\n            memory: 50Mi\n        volumeMounts:\n        - mountPath: /var/run/configmaps/config\n          name: config\n      nodeSelector:\n        node-role.kubernetes.io/master: \"\"\n      tolerations:\n      - key: node-role.kubernetes.io/master\n        operator: Exists\n        effect: NoSchedule\n      volumes:\n      - name: config\n        configMap:\n          name: {component}-config\n"
        ),
    }
}

/// `(file name, text)` pairs holding `objects` objects in total; about a third of the files
/// hold 2-4 documents.
pub fn generate(objects: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = Lcg::new(seed);
    let mut files = Vec::new();
    let mut made = 0;
    let mut n = 0;
    while made < objects {
        let component = rng.pick(COMPONENTS);
        let level = [3, 10, 20, 30, 50, 70, 80, 90][(rng.next() % 8) as usize];
        let docs = if rng.chance(33) {
            2 + (rng.next() % 3) as usize
        } else {
            1
        };
        let docs = docs.min(objects - made);
        let mut text = String::new();
        if rng.chance(20) {
            text.push_str("# Generated payload manifest.\n---\n");
        }
        for d in 0..docs {
            if d > 0 {
                text.push_str("---\n");
            }
            text.push_str(&object(&mut rng, component, made + d));
        }
        files.push((
            format!("0000_{level:02}_{component}_{n:04}_manifest.yaml"),
            text,
        ));
        made += docs;
        n += 1;
    }
    files
}

/// Writes a generated payload into `dir`.
pub fn write(dir: &Path, objects: usize, seed: u64) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let files = generate(objects, seed);
    for (name, text) in &files {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(files.len())
}
