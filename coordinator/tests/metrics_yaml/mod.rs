//! YAML files of the repository as JSON values (every document), for the ops checks.

#![allow(dead_code)]

use std::path::Path;

use serde_json::Value;

use crate::common::repo;

/// YAML (every document of a file) as JSON values.
pub fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = yaml_rust2::YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
    docs.iter().map(to_json).filter(|v| !v.is_null()).collect()
}

fn to_json(y: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .map(Value::from)
            .unwrap_or(Value::String(s.clone())),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        other => panic!("unsupported YAML key {other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("unsupported YAML value {other:?}"),
    }
}

pub fn yaml(path: &str) -> Value {
    let mut docs = yaml_docs(&repo().join(path));
    assert_eq!(docs.len(), 1, "{path}: expected one YAML document");
    docs.remove(0)
}
