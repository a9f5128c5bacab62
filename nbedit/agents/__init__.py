"""Let a model edit: adapters for the tool-call formats models emit.

``TextEditorTool`` (Anthropic's text editor tool), ``ApplyPatchTool`` (OpenAI's
Responses API ``apply_patch``) and ``FunctionTools`` (plain JSON-schema function
tools) all plan with the ``Workspace`` (nothing written), pass the plan through
one approval gate (auto, review, dry-run or a callable), and write through
``Workspace.apply``, so every change a model makes is matched without guessing,
written atomically and recorded with the tool and call id as its origin.

Every message is written in the calling tool's own terms (``messages``); paths
are checked at the tool boundary; ``FunctionTools`` and the MCP server also
offer anchored edits (``anchors``), where lines are named by ``N:hash``.

Importing this package stays light: IPython and ipywidgets load only when
``approval="review"`` is used, and the MCP server lives in ``mcp_server``.
"""

from __future__ import annotations

from nbedit.agents.apply_patch import ApplyPatchTool
from nbedit.agents.approval import Decision
from nbedit.agents.functions import FunctionTools
from nbedit.agents.text_editor import TextEditorTool

__all__ = ["ApplyPatchTool", "Decision", "FunctionTools", "TextEditorTool"]
