//! The viewer data as a tournament's viewer index stores it (`replays/NNNNN.js`, written once a
//! match), and its inverse. Pure functions over JSON. Two forms: the compact one
//! (`index_sim`: the moves, from which the page re-plays every frame), used whenever it gives
//! back exactly the viewer data, and else (an `error`, frames the moves do not explain) the
//! frames packed column by column ([`pack_frames`]), which gzips to about half. The index page
//! (`viewer_index.html`, `viewer_sim.js`) reads both, so older folders keep working; the tests
//! (`games/tests/viewer_sim.rs`, `coordinator/tests/viewer_pages.rs`) check that it gives back
//! exactly what `farm view` embeds.

use serde_json::{json, Map, Value};

use super::index_sim::{from_sim_form, sim_form_of, to_sim_form, SIM};
use super::replay::{viewer_data, Replay};

/// The frame member the page derives from the players and the events when it is left out.
const LANDED: &str = "landed";

/// The viewer data as the index page stores it: the compact form (`index_sim::to_sim_form`,
/// marked by its `sim` member) when re-playing its moves with this engine gives back exactly
/// `data`, else [`pack_frames`] of it. [`unpack_index_data`] is the inverse.
pub fn pack_for_index(data: Value) -> Value {
    match to_sim_form(&data) {
        Some(sim) if from_sim_form(&sim).as_ref() == Some(&data) => sim,
        _ => pack_frames(data),
    }
}

/// A replay's data file document for the index, without the result's timing (the viewer does
/// not show it): the compact form built straight from the replay (`index_sim::sim_form_of`, no
/// frame built) where it re-plays exactly, else [`pack_for_index`] of the viewer data. The same
/// document as `pack_for_index` of the viewer data without timing, at a fraction of the cost.
pub fn index_form(replay: &Replay) -> Value {
    let without_timing = |mut result: Value| {
        if let Some(r) = result.as_object_mut() {
            r.shift_remove("timing");
        }
        result
    };
    if let Some(sim) = sim_form_of(replay, &without_timing(replay.result_json())) {
        return sim;
    }
    let mut data = viewer_data(replay);
    if let Some(r) = data.get_mut("result") {
        *r = without_timing(r.take());
    }
    pack_for_index(data)
}

/// The viewer data with its frames packed: the same document with `frames` (objects with
/// the same members) turned into `columns`, one list per member, where
/// - a member equal to its frame's index in every frame (the turn `t`) is left out and named in
///   `sequential`;
/// - `landed`, where it is what `derive_landed` gives in every frame, is left out and named in
///   `derived`;
/// - in a member whose values are lists of objects that all have the same members in the same
///   order (players, bombs, flames, status), each object is stored as the list of its values and
///   the members are named once, in `shapes`;
/// - in a member whose every value is a list, a value with the same length as the one before is
///   stored as `{"~": [[i, value], ...]}` (the entries that differ from the frame before) when
///   that is shorter.
///
/// The page turns it back before showing it; [`unpack_index_data`] is the same in Rust (tests).
/// Data without frames, or with frames of different members, is unchanged.
pub fn pack_frames(mut data: Value) -> Value {
    let initial_players = data["initial"]["players"].clone();
    let Some(o) = data.as_object_mut() else {
        return data;
    };
    let Some(Value::Array(frames)) = o.get("frames") else {
        return data;
    };
    let keys: Vec<String> = frames
        .first()
        .and_then(Value::as_object)
        .map(|f| f.keys().cloned().collect())
        .unwrap_or_default();
    let same_members = frames.iter().all(|f| {
        f.as_object()
            .is_some_and(|f| f.len() == keys.len() && keys.iter().all(|k| f.contains_key(k)))
    });
    if !same_members || frames.is_empty() {
        return data;
    }
    let landed_derived = keys.iter().any(|k| k == LANDED)
        && frames
            .iter()
            .zip(derive_landed(frames, &initial_players))
            .all(|(f, d)| f[LANDED] == d);
    let (mut columns, mut sequential, mut derived, mut shapes) =
        (Map::new(), Vec::new(), Vec::new(), Map::new());
    for k in &keys {
        if landed_derived && k == LANDED {
            derived.push(json!(LANDED));
            continue;
        }
        let col: Vec<&Value> = frames.iter().map(|f| &f[k.as_str()]).collect();
        if col
            .iter()
            .enumerate()
            .all(|(i, v)| v.as_u64() == Some(i as u64))
        {
            sequential.push(Value::String(k.clone()));
            continue;
        }
        let packed = match shape_of(&col) {
            Some(members) => {
                let tuples: Vec<Value> = col.iter().map(|v| to_tuples(v, &members)).collect();
                shapes.insert(k.clone(), json!(members));
                delta_column(&tuples.iter().collect::<Vec<_>>())
            }
            None if col.iter().all(|v| v.is_array()) => delta_column(&col),
            None => col.into_iter().cloned().collect(),
        };
        columns.insert(k.clone(), Value::Array(packed));
    }
    o.shift_remove("frames");
    o.insert("columns".into(), Value::Object(columns));
    o.insert("sequential".into(), Value::Array(sequential));
    if !derived.is_empty() {
        o.insert("derived".into(), Value::Array(derived));
    }
    if !shapes.is_empty() {
        o.insert("shapes".into(), Value::Object(shapes));
    }
    data
}

/// Where each player landed in each frame, as the viewer data records it: its position after
/// the turn if it was alive before the turn (the frame before, or the initial players) and did
/// not leave it early (a death by fault or by the shrinking wall), else null.
fn derive_landed(frames: &[Value], initial_players: &Value) -> Vec<Value> {
    let mut before = initial_players;
    frames
        .iter()
        .map(|f| {
            let players = f["players"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let left_early = |p: usize| {
                f["events"].as_array().into_iter().flatten().any(|e| {
                    e["type"] == "death"
                        && e["player"].as_u64() == Some(p as u64)
                        && (e["cause"] == "fault" || e["cause"] == "shrink")
                })
            };
            let landed: Vec<Value> = players
                .iter()
                .enumerate()
                .map(|(p, pl)| {
                    if before[p]["alive"] == true && !left_early(p) {
                        json!([pl["x"], pl["y"]])
                    } else {
                        Value::Null
                    }
                })
                .collect();
            before = &f["players"];
            Value::Array(landed)
        })
        .collect()
}

/// The members shared by every object in a column of lists of objects (in order), if there is
/// at least one object and they all have the same.
fn shape_of(col: &[&Value]) -> Option<Vec<String>> {
    let mut members: Option<Vec<&String>> = None;
    for v in col {
        for item in v.as_array()? {
            let keys: Vec<&String> = item.as_object()?.keys().collect();
            match &members {
                Some(m) if *m != keys => return None,
                Some(_) => {}
                None => members = Some(keys),
            }
        }
    }
    members.map(|m| m.into_iter().cloned().collect())
}

/// A list of objects as a list of their values (in `members` order).
fn to_tuples(list: &Value, members: &[String]) -> Value {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|item| -> Value { members.iter().map(|m| item[m.as_str()].clone()).collect::<Vec<Value>>().into() })
        .collect()
}

/// The inverse of [`to_tuples`].
fn from_tuples(list: &Value, members: &[String]) -> Value {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let values = t.as_array().map(Vec::as_slice).unwrap_or(&[]);
            let o: Map<String, Value> = members.iter().cloned().zip(values.iter().cloned()).collect();
            Value::Object(o)
        })
        .collect()
}

/// A column of lists, each stored as its changes from the one before where that is shorter.
fn delta_column(col: &[&Value]) -> Vec<Value> {
    let empty = Vec::new();
    let mut out = Vec::with_capacity(col.len());
    let mut prev: &Vec<Value> = &empty;
    for (i, v) in col.iter().enumerate() {
        let cur = v.as_array().unwrap_or(&empty);
        if i > 0 && cur.len() == prev.len() {
            let changes: Vec<Value> = cur
                .iter()
                .zip(prev)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(j, (a, _))| json!([j, a]))
                .collect();
            let delta = json!({ "~": changes });
            if delta.to_string().len() < v.to_string().len() {
                out.push(delta);
                prev = cur;
                continue;
            }
        }
        out.push((*v).clone());
        prev = cur;
    }
    out
}

/// The inverse of [`pack_for_index`] (of both forms), as the index page does it in JavaScript.
/// A compact form that does not re-play is returned as it is.
pub fn unpack_index_data(mut data: Value) -> Value {
    if data.get(SIM).is_some() {
        return from_sim_form(&data).unwrap_or(data);
    }
    let initial_players = data["initial"]["players"].clone();
    let Some(o) = data.as_object_mut() else {
        return data;
    };
    let Some(Value::Object(columns)) = o.shift_remove("columns") else {
        return data;
    };
    let names = |v: Option<Value>| -> Vec<String> {
        v.and_then(|v| v.as_array().cloned())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(String::from))
            .collect()
    };
    let sequential = names(o.shift_remove("sequential"));
    let derived = names(o.shift_remove("derived"));
    let shapes: Map<String, Value> = match o.shift_remove("shapes") {
        Some(Value::Object(s)) => s,
        _ => Map::new(),
    };
    let len = columns
        .values()
        .map(|c| c.as_array().map_or(0, Vec::len))
        .max()
        .unwrap_or(0);
    let mut frames: Vec<Map<String, Value>> = vec![Map::new(); len];
    for (k, col) in &columns {
        let members = names(shapes.get(k).cloned());
        let mut prev: Vec<Value> = Vec::new();
        for (i, v) in col.as_array().into_iter().flatten().enumerate() {
            let value = match v.get("~").and_then(Value::as_array) {
                Some(changes) if !v.is_array() => {
                    let mut cur = prev.clone();
                    for c in changes {
                        if let (Some(j), Some(x)) = (c[0].as_u64(), c.get(1)) {
                            if let Some(slot) = usize::try_from(j).ok().and_then(|j| cur.get_mut(j)) {
                                *slot = x.clone();
                            }
                        }
                    }
                    Value::Array(cur)
                }
                _ => v.clone(),
            };
            prev = value.as_array().cloned().unwrap_or_default();
            let value = if shapes.contains_key(k) {
                from_tuples(&value, &members)
            } else {
                value
            };
            frames[i].insert(k.clone(), value);
        }
    }
    for k in &sequential {
        for (i, f) in frames.iter_mut().enumerate() {
            f.insert(k.clone(), Value::from(i as u64));
        }
    }
    let mut frames: Vec<Value> = frames.into_iter().map(Value::Object).collect();
    if derived.iter().any(|k| k == LANDED) {
        let landed = derive_landed(&frames, &initial_players);
        for (f, l) in frames.iter_mut().zip(landed) {
            if let Some(f) = f.as_object_mut() {
                f.insert(LANDED.into(), l);
            }
        }
    }
    o.insert("frames".into(), Value::Array(frames));
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_turns_frames_into_columns_and_back() {
        let data = json!({"meta": {}, "frames": [
            {"t": 0, "b": "x", "p": ["aaaa", "bbbb", "cccc"], "q": [[1], [2]]},
            {"t": 1, "b": "y", "p": ["aaaa", "bbbb", "dddd"], "q": [[1]]},
            {"t": 2, "b": "y", "p": ["aaaa", "bbbb", "dddd"], "q": [[1], [2]]},
        ]});
        let packed = pack_for_index(data.clone());
        assert_eq!(
            packed,
            json!({"meta": {}, "columns": {"b": ["x", "y", "y"],
                "p": [["aaaa", "bbbb", "cccc"], {"~": [[2, "dddd"]]}, {"~": []}],
                "q": [[[1], [2]], [[1]], [[1], [2]]]},
                "sequential": ["t"]})
        );
        let back = unpack_index_data(packed);
        assert_eq!(back["frames"], data["frames"]);
        let odd = json!({"frames": [{"t": 0}, {"u": 1}]});
        assert_eq!(
            pack_for_index(odd.clone()),
            odd,
            "unlike frames stay as they are"
        );
        let none = json!({"error": "x"});
        assert_eq!(pack_for_index(none.clone()), none);
    }

    #[test]
    fn lists_of_like_objects_are_stored_as_value_lists() {
        let data = json!({"frames": [
            {"t": 0, "b": [{"x": 1, "y": 2}, {"x": 3, "y": 4}], "m": [{"x": 1}, {"y": 1}]},
            {"t": 1, "b": [{"x": 1, "y": 2}], "m": []},
            {"t": 2, "b": [{"x": 1, "y": 2}, {"x": 5, "y": 4}], "m": [{"x": 1}]},
        ]});
        let packed = pack_for_index(data.clone());
        assert_eq!(packed["shapes"], json!({"b": ["x", "y"]}), "m's objects differ");
        assert_eq!(
            packed["columns"]["b"],
            json!([[[1, 2], [3, 4]], [[1, 2]], [[1, 2], [5, 4]]])
        );
        assert_eq!(unpack_index_data(packed)["frames"], data["frames"]);
        let reordered = json!({"frames": [{"b": [{"x": 1, "y": 2}, {"y": 2, "x": 1}]}]});
        assert!(pack_for_index(reordered).get("shapes").is_none(), "member order counts");
    }
}
