//! An insertion-ordered string-to-string map that serialises as a JSON object, for the
//! hash tables of `identity.json` and `MANIFEST.json` whose key order follows the writer's.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Ordered `(key, value)` pairs; a repeated key on input keeps its last value in the first
/// key's place, as Python's `json.loads` does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrMap(pub Vec<(String, String)>);

impl StrMap {
    /// The value stored under `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Inserts or replaces (keeping the original position).
    pub fn insert(&mut self, key: String, value: String) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over `(key, value)` in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Order-insensitive comparison (as Python dicts compare); names the first difference.
    pub fn difference(&self, saved: &StrMap) -> Option<String> {
        for (k, v) in self.iter() {
            match saved.get(k) {
                None => return Some(format!("{k:?} is new")),
                Some(old) if old != v => {
                    return Some(format!("{k:?} changed (saved {old}, now {v})"))
                }
                _ => {}
            }
        }
        saved
            .iter()
            .find(|(k, _)| self.get(k).is_none())
            .map(|(k, _)| format!("{k:?} is missing now"))
    }
}

impl FromIterator<(String, String)> for StrMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut m = StrMap::default();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl Serialize for StrMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StrMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<StrMap, A::Error> {
                let mut m = StrMap::default();
                while let Some((k, v)) = a.next_entry::<String, String>()? {
                    m.insert(k, v);
                }
                Ok(m)
            }
        }
        d.deserialize_map(V)
    }
}
