//! `Microsoft.Resources/tags/default` at resource-group scope in the fake: GET, PUT (Replace),
//! PATCH Merge/Replace/Delete; tag names with reserved characters are refused. A Merge of a
//! private-IP claim lets an armed rival claim the same address (see `resource_groups`).

use super::arm::{Call, Reply};
use super::world::{World, rg_id};
use serde_json::{Map, Value, json};

impl World {
    pub(super) fn tags(&mut self, call: &Call, rg: &str, rg_name: &str) -> Reply {
        let id = format!(
            "{}/providers/Microsoft.Resources/tags/default",
            rg_id(rg_name)
        );
        let Some(tags) = self.resource_groups.get_mut(rg) else {
            return Reply::error(404, "ResourceGroupNotFound", "not found");
        };
        let view = |tags: &Map<String, Value>| json!({"id": id, "name": "default", "type": "Microsoft.Resources/tags", "properties": {"tags": tags}});
        match call.method {
            "GET" => Reply::json(200, view(tags)),
            "PUT" | "PATCH" => {
                let body = match call.json() {
                    Ok(b) => b,
                    Err(r) => return r,
                };
                let Some(given) = body["properties"]["tags"].as_object() else {
                    return Reply::error(
                        400,
                        "InvalidRequestContent",
                        "properties.tags is required.",
                    );
                };
                for (name, value) in given {
                    if name.chars().any(|c| "<>%&\\?/".contains(c)) || !value.is_string() {
                        return Reply::error(
                            400,
                            "InvalidTagNameCharacters",
                            format!(
                                "The tag names '{name}' have reserved characters '<,>,%,&,\\,?,/' or control characters."
                            ),
                        );
                    }
                }
                let claims: Vec<String> = given
                    .values()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                let operation = if call.method == "PUT" {
                    "Replace"
                } else {
                    body["operation"].as_str().unwrap_or("")
                };
                match operation {
                    "Replace" => *tags = given.clone(),
                    "Merge" => tags.extend(given.clone()),
                    "Delete" => {
                        for (name, value) in given {
                            if tags.get(name).is_some_and(|v| v == value || value == "") {
                                tags.remove(name);
                            }
                        }
                    }
                    other => {
                        return Reply::error(
                            400,
                            "InvalidRequestContent",
                            format!(
                                "Unsupported tag patch operation '{other}'; expected Merge, Replace or Delete."
                            ),
                        );
                    }
                }
                let answer = view(tags);
                if operation == "Merge" {
                    for value in &claims {
                        self.rival_claims(value);
                    }
                }
                Reply::json(200, answer)
            }
            _ => Reply::error(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}
