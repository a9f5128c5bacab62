"""Every declaration and every result, checked against the installed SDKs' own types.

The SDKs' request and response types (``openai``, ``anthropic``, ``mcp``) are
TypedDicts and pydantic models; pydantic validates a value against them, with
unknown keys refused, so a schema nbedit offers is one the SDK would send, and a
result nbedit returns is one the SDK would accept as the next turn's input. The
tool calls are recorded ones, built as the SDKs' own objects; no network.

Strict mode's rules are checked on every schema (OpenAI's structured function
calling and Anthropic's strict tool use share them): every object closes with
``additionalProperties: false``, lists every property in ``required``, and an
optional property admits ``null``. OpenAI's own strict-schema pass over each
schema must find nothing to change.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from nbedit import Workspace
from nbedit.agents import ApplyPatchTool, FunctionTools, TextEditorTool
from nbedit.agents.functions import FUNCTIONS
from tests.agents_support import recorded

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from anthropic.types import (  # noqa: E402
    ToolParam,
    ToolResultBlockParam,
    ToolTextEditor20250124Param,
    ToolTextEditor20250429Param,
    ToolTextEditor20250728Param,
    ToolUseBlock,
)
from openai.types.chat import ChatCompletionFunctionToolParam  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ApplyPatchToolParam,
    FunctionToolParam,
    ResponseApplyPatchToolCall,
    ResponseFunctionToolCall,
)
from openai.types.responses.response_input_item_param import (  # noqa: E402
    ApplyPatchCallOutput,
    FunctionCallOutput,
)
from openai.types.shared_params import FunctionDefinition  # noqa: E402


def validate(kind: Any, value: Any) -> None:
    """``value`` is a ``kind`` (a TypedDict of an SDK), with no key the SDK does not know."""
    TypeAdapter(kind).validate_python(value)
    known = kind.__required_keys__ | kind.__optional_keys__
    assert set(value) <= known, f"{sorted(set(value) - known)} are not keys of {kind.__name__}"
    assert kind.__required_keys__ <= set(value), f"{kind.__name__} needs {sorted(kind.__required_keys__)}"


def strict_problems(schema: dict[str, Any], where: str = "") -> list[str]:
    problems = []
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where or 'root'}: additionalProperties is not false")
        if sorted(schema.get("required", [])) != sorted(properties):
            problems.append(f"{where or 'root'}: required {schema.get('required')} != {sorted(properties)}")
        for name, child in properties.items():
            problems.extend(strict_problems(child, f"{where}.{name}"))
    for option in schema.get("anyOf", ()):
        problems.extend(strict_problems(option, where))
    if "items" in schema:
        problems.extend(strict_problems(schema["items"], f"{where}[]"))
    return problems


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_function_schema_is_strict_and_openai_s_strict_pass_changes_nothing(name: str) -> None:
    from openai.lib._pydantic import _ensure_strict_json_schema

    schema = FUNCTIONS[name]["parameters"]
    assert strict_problems(schema) == []
    assert _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema)) == schema


def test_function_declarations_validate_as_each_sdk_s_tool_type(workspace: Workspace) -> None:
    tools = FunctionTools(workspace)
    for declaration in tools.schemas("openai"):
        validate(FunctionToolParam, declaration)
        assert declaration["strict"] is True
    for declaration in tools.schemas("openai-chat"):
        validate(ChatCompletionFunctionToolParam, declaration)
        validate(FunctionDefinition, declaration["function"])
        assert declaration["function"]["strict"] is True
    for declaration in tools.schemas("anthropic"):
        validate(ToolParam, declaration)
        assert declaration["strict"] is True
    loose = tools.schemas("openai", strict=False)
    edit = next(item for item in loose if item["name"] == "edit")
    assert edit["strict"] is False and edit["parameters"]["required"] == ["path", "old", "new"]
    for declaration in loose:
        validate(FunctionToolParam, declaration)


def test_tool_definitions_validate_as_the_sdk_params(workspace: Workspace) -> None:
    validate(ToolTextEditor20250728Param, TextEditorTool(workspace, max_characters=9000).definition)
    validate(
        ToolTextEditor20250429Param, TextEditorTool(workspace, version="text_editor_20250429").definition
    )
    validate(
        ToolTextEditor20250124Param, TextEditorTool(workspace, version="text_editor_20250124").definition
    )
    validate(ApplyPatchToolParam, ApplyPatchTool(workspace).definition)


def test_text_editor_takes_sdk_tool_use_blocks_and_answers_tool_result_params(
    workspace: Workspace, project: Path
) -> None:
    tool = TextEditorTool(workspace)
    calls = recorded("anthropic_tool_use")
    for name in ("view_app", "exact_edit", "ambiguous_edit"):
        block = ToolUseBlock.model_validate(calls[name])
        result = tool.run(block)
        validate(ToolResultBlockParam, result)
    assert 'return f"hello {name}"' in (project / "app.py").read_text()


def test_apply_patch_takes_sdk_calls_and_answers_output_items(workspace: Workspace, project: Path) -> None:
    tool = ApplyPatchTool(workspace)
    for name in ("update_exact", "create_file", "update_missing"):
        call = ResponseApplyPatchToolCall.model_validate(recorded("openai_apply_patch_call")[name])
        output = tool.run(call)
        validate(ApplyPatchCallOutput, output)
    assert (project / "util.py").exists()


def test_function_tools_take_sdk_function_calls(workspace: Workspace, project: Path) -> None:
    tools = FunctionTools(workspace)
    call = ResponseFunctionToolCall(
        type="function_call",
        call_id="call_F1",
        name="edit",
        arguments='{"path": "README.md", "old": "tiny app", "new": "small app", "replace_all": null, "cell": null}',
    )
    text = tools.run(call.name, call.arguments, call_id=call.call_id)
    validate(FunctionCallOutput, {"type": "function_call_output", "call_id": call.call_id, "output": text})
    assert text.startswith("Edited README.md.") and "# small app" in (project / "README.md").read_text()
    assert workspace.history()[0].origin == "agent:edit:call_F1"
