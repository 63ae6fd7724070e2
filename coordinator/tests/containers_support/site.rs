//! What the containers test's phases share: the deploy files it reads (compose's worker and
//! coordinator services, the k8s worker Deployment and Secret), checked against the binary under
//! test, and one run's site on this host (names, volumes, secrets, farm, guards, and the `Host`
//! that turns the files into podman flags), so that the phases pass one value between them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::{
    compose_service, free_port, repo, volume_path, worker_help, Guard, Host, Restore, RunSpec,
};
use crate::cluster_support::{Farm, BROKER, KEY};
use crate::metrics_yaml;

/// The deploy files as the test runs them.
pub struct DeployFiles {
    /// deploy/docker-compose.yml.
    pub compose: Value,
    /// The worker Deployment of deploy/k8s/30-worker.yaml.
    pub deployment: Value,
    /// The documents of deploy/k8s/10-secret.yaml.
    pub secret_docs: Vec<Value>,
}

impl DeployFiles {
    /// Reads the files and checks that every feature they rely on is in the binary under test
    /// and that they build and configure what the test assumes.
    pub fn read() -> DeployFiles {
        let (wflags, wenv) = worker_help();
        // Every feature the deploy files rely on must be in the binary under test.
        assert!(
            wflags.contains("--self-test"),
            "`farm worker --self-test` is missing"
        );
        assert!(
            wenv.contains("FARM_UID_LEASE_DIR") && wenv.contains("FARM_SCRATCH_DIR"),
            "`farm worker` lacks FARM_UID_LEASE_DIR / FARM_SCRATCH_DIR"
        );

        let compose = metrics_yaml::yaml("deploy/docker-compose.yml");
        let svc_worker = &compose["services"]["worker"];
        let svc_coord = &compose["services"]["coordinator"];
        for (svc, what) in [(svc_worker, "worker"), (svc_coord, "coordinator")] {
            assert_eq!(
                svc["build"]["dockerfile"],
                format!("deploy/Dockerfile.{what}"),
                "compose {what} builds another Dockerfile"
            );
            assert_eq!(
                svc["build"]["context"], "..",
                "compose {what}: context is the repository"
            );
        }
        let wenv_file = svc_worker["environment"].as_object().unwrap();
        for k in ["FARM_UID_BASE", "FARM_UID_COUNT"] {
            assert!(
                !wenv_file.contains_key(k),
                "compose sets {k}: update UID_BASE/UID_COUNT here"
            );
        }
        assert!(
            !wenv_file.contains_key("FARM_WORKSPACE"),
            "workers need no referee package of their own any more"
        );
        let k8s_docs = metrics_yaml::yaml_docs(&repo().join("deploy/k8s/30-worker.yaml"));
        let deployment = k8s_docs
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .expect("30-worker.yaml has the worker Deployment")
            .clone();
        let secret_docs = metrics_yaml::yaml_docs(&repo().join("deploy/k8s/10-secret.yaml"));
        DeployFiles {
            compose,
            deployment,
            secret_docs,
        }
    }

    pub fn svc_worker(&self) -> &Value {
        &self.compose["services"]["worker"]
    }

    pub fn svc_coord(&self) -> &Value {
        &self.compose["services"]["coordinator"]
    }

    /// The compose worker's `environment`.
    pub fn worker_env(&self) -> &Map<String, Value> {
        self.svc_worker()["environment"].as_object().unwrap()
    }

    /// The k8s worker pod's `volumes`.
    pub fn pod_volumes(&self) -> &Vec<Value> {
        self.deployment["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap()
    }
}

/// One run of the test on this host. Fields drop in order: the queues and the Redis database
/// are restored while the containers still exist (coordinator logs name their queues), then the
/// farm's folder, then the guard removes the containers and volumes.
pub struct Site {
    pub files: DeployFiles,
    /// Prefix of every container and volume name of this run.
    pub run: String,
    pub host: Host<'static>,
    /// The farm key, as compose's `farm_key` secret.
    pub key_file: PathBuf,
    /// The host folder of compose's uid-leases volume (also the k8s node's hostPath).
    pub uid_leases: PathBuf,
    pub restore: Restore,
    pub farm: Farm,
    pub guard: Guard,
}

impl Site {
    /// Per-run names, volumes and secrets for the deploy files, on Redis database `redis_db`.
    pub fn new(files: DeployFiles, redis_db: u32) -> Site {
        let run = format!(
            "mfct-{}-{}",
            std::process::id(),
            &hex::encode(rand::random::<[u8; 3]>())
        );
        let guard = Guard::default();
        let farm = Farm::new("containers", redis_db);
        let restore = Restore {
            redis: farm.redis_url(),
            queues: Mutex::new(Vec::new()),
            coordinators: Mutex::new(Vec::new()),
        };
        let key_file = farm.dir.path().join("farm.key");
        std::fs::write(&key_file, KEY).unwrap();
        // The k8s Secret farm-key as a folder of its keys (the test's key under each).
        let secret_dir = farm.dir.path().join("secret-farm-key");
        std::fs::create_dir_all(&secret_dir).unwrap();
        let farm_key_secret = files
            .secret_docs
            .iter()
            .find(|d| d["kind"] == "Secret" && d["metadata"]["name"] == "farm-key")
            .expect("10-secret.yaml: Secret farm-key");
        for k in farm_key_secret["stringData"].as_object().unwrap().keys() {
            let p = secret_dir.join(k);
            std::fs::write(&p, KEY).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
        }
        let mut volumes = BTreeMap::new();
        for v in files.compose["volumes"].as_object().unwrap().keys() {
            volumes.insert(v.clone(), format!("{run}-{v}"));
        }
        for v in ["compile-cache", "uid-leases", "runs"] {
            let name = volumes
                .get(v)
                .unwrap_or_else(|| panic!("compose volume {v}"))
                .clone();
            guard.volume(&name);
        }
        // k8s emptyDir volumes that are not in memory: fresh podman volumes too.
        for v in files.pod_volumes() {
            let ed = &v["emptyDir"];
            if ed.is_object() && ed["medium"] != "Memory" {
                let n = v["name"].as_str().unwrap();
                volumes.insert(n.to_string(), guard.volume(&format!("{run}-k8s-{n}")));
            }
        }
        let uid_leases = volume_path(&volumes["uid-leases"]);
        let mut host_paths = BTreeMap::new();
        for v in files.pod_volumes() {
            if let Some(p) = v["hostPath"]["path"].as_str() {
                assert_eq!(
                    p, "/var/lib/matchfarm/uids",
                    "30-worker.yaml: the only hostPath is the node's uid-lease folder"
                );
                host_paths.insert(p.to_string(), uid_leases.clone());
            }
        }
        let host = Host {
            free_port: &free_port,
            redis_db,
            volumes,
            secrets: BTreeMap::from([
                ("farm_key".to_string(), key_file.clone()),
                ("farm-key".to_string(), secret_dir.clone()),
            ]),
            secret_values: BTreeMap::from([(
                ("farm-broker".to_string(), "amqp".to_string()),
                BROKER.to_string(),
            )]),
            host_paths,
            extra_env: vec![("FARM_TURN_MS".into(), "1000".into())],
            repo: repo(),
        };
        Site {
            files,
            run,
            host,
            key_file,
            uid_leases,
            restore,
            farm,
            guard,
        }
    }

    /// The compose worker service as podman flags (fresh metrics ports each call).
    pub fn compose_worker(&self) -> RunSpec {
        compose_service("worker", self.files.svc_worker(), &self.host)
    }
}
