//! A bot's per-turn timing as a replay stores it: one value list per turn under a list of column
//! names, not one object per turn. The member names were a third of the gzipped bytes of the
//! timing, which is most of a replay (the times themselves do not compress). Pure functions over
//! JSON: [`columnar`] writes the form, [`turn_entries`] reads it back as objects, and also reads
//! the older form (a list of objects), so replays written before it stay readable.
//!
//! The form, under a bot's `per_turn`:
//! `{"columns": ["turn", "wall_us", "cpu_us", "waited_us", "met"], "rows": [[0, 227, 168, 57, true], …]}`;
//! a turn with more members than the columns (`token_us`, `host_waited_us`, `late`) has them
//! as a sixth element, an object.

use serde_json::{json, Map, Value};

/// The members every turn has, in the order of a row.
pub const COLUMNS: [&str; 5] = ["turn", "wall_us", "cpu_us", "waited_us", "met"];

/// `timing` (bot -> object with `per_turn`, a list of turn objects) with each bot's `per_turn`
/// in the columnar form. A bot whose turns are not all objects with every column member is left
/// as it is, so nothing is ever lost: [`turn_entries`] gives back exactly the objects.
pub fn columnar(mut timing: Value) -> Value {
    let Some(bots) = timing.as_object_mut() else {
        return timing;
    };
    for bot in bots.values_mut() {
        let Some(per_turn) = bot.get_mut("per_turn") else {
            continue;
        };
        if let Some(rows) = rows_of(per_turn) {
            *per_turn = json!({"columns": COLUMNS, "rows": rows});
        }
    }
    timing
}

/// The rows of a list of turn objects, or `None` when one of them is not an object with every
/// column member.
fn rows_of(per_turn: &Value) -> Option<Vec<Value>> {
    per_turn
        .as_array()?
        .iter()
        .map(|turn| {
            let mut rest = turn.as_object()?.clone();
            let mut row = COLUMNS
                .iter()
                .map(|c| rest.shift_remove(*c))
                .collect::<Option<Vec<Value>>>()?;
            if !rest.is_empty() {
                row.push(Value::Object(rest));
            }
            Some(Value::Array(row))
        })
        .collect()
}

/// A bot's turns (its timing object, with `per_turn` in either form) as objects, in order. A
/// row that is not a list, or is shorter than its columns, gives the members it has; a
/// `per_turn` of neither form gives no turns.
pub fn turn_entries(bot: &Value) -> Vec<Map<String, Value>> {
    match bot.get("per_turn") {
        Some(Value::Array(turns)) => turns.iter().filter_map(|t| t.as_object().cloned()).collect(),
        Some(Value::Object(table)) => {
            let columns: Vec<&str> = table
                .get("columns")
                .and_then(Value::as_array)
                .map(|c| c.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let rows = table.get("rows").and_then(Value::as_array);
            rows.into_iter()
                .flatten()
                .filter_map(Value::as_array)
                .map(|row| entry(&columns, row))
                .collect()
        }
        _ => Vec::new(),
    }
}

fn entry(columns: &[&str], row: &[Value]) -> Map<String, Value> {
    let mut out: Map<String, Value> = columns
        .iter()
        .zip(row)
        .map(|(c, v)| ((*c).to_string(), v.clone()))
        .collect();
    if let Some(Value::Object(rest)) = row.get(columns.len()) {
        out.extend(rest.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Value {
        json!({
            "bot_0": {"turns": 3, "wall_us": 10, "per_turn": [
                {"turn": 0, "wall_us": 227, "cpu_us": 168, "waited_us": 57, "met": true},
                {"turn": 1, "wall_us": 60_000, "cpu_us": 50_100, "waited_us": 0, "met": false,
                 "token_us": 12, "late": {"main_cpu_us": 50_100, "states": ["R"]}},
                {"turn": 2, "wall_us": 5, "cpu_us": 4, "waited_us": 1, "met": true}]},
            "bot_1": {"turns": 0, "per_turn": []},
        })
    }

    #[test]
    fn columnar_reads_back_exactly_the_turn_objects() {
        let before = timing();
        let after = columnar(before.clone());
        assert_eq!(after["bot_0"]["per_turn"]["columns"], json!(COLUMNS));
        assert_eq!(after["bot_0"]["per_turn"]["rows"][0], json!([0, 227, 168, 57, true]));
        assert_eq!(after["bot_0"]["turns"], 3);
        for bot in ["bot_0", "bot_1"] {
            let old = turn_entries(&before[bot]);
            assert_eq!(turn_entries(&after[bot]), old, "{bot}");
        }
        assert_eq!(turn_entries(&after["bot_0"]).len(), 3);
        // Member order within a turn is kept too (the extras follow the columns).
        let keys: Vec<String> = turn_entries(&after["bot_0"])[1].keys().cloned().collect();
        assert_eq!(keys[5..], ["token_us".to_string(), "late".to_string()]);
    }

    #[test]
    fn turns_it_cannot_store_as_rows_are_left_as_they_are() {
        let odd = json!({"bot_0": {"per_turn": [{"turn": 0, "wall_us": 1}]},
                         "bot_1": {"per_turn": "not a list"}, "bot_2": 7});
        assert_eq!(columnar(odd.clone()), odd);
        assert_eq!(columnar(json!("no bots")), json!("no bots"));
    }

    #[test]
    fn malformed_tables_give_what_they_hold() {
        let t = json!({"per_turn": {"columns": ["turn", "wall_us"], "rows": [[1], "x", [2, 3, 4]]}});
        let e = turn_entries(&t);
        assert_eq!(e.len(), 2);
        assert_eq!(Value::Object(e[0].clone()), json!({"turn": 1}));
        assert_eq!(Value::Object(e[1].clone()), json!({"turn": 2, "wall_us": 3}));
        assert!(turn_entries(&json!({"per_turn": 3})).is_empty());
        assert!(turn_entries(&json!({})).is_empty());
    }
}
