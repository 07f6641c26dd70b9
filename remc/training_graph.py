"""Whether an ONNX file is a training graph (forward + loss + backward) or a forward model, read from the file
alone, for the commands that need one or the other (compile, sweep, maxbatch)."""
from __future__ import annotations


def forward_only(path: str) -> bool:
    """Whether the ONNX file at ``path`` has no backward pass: no node named as ``remc grad`` names backward
    nodes and no gradient output. False when the file cannot be read (the command's own error says why)."""
    import onnx

    from .passes.grad import BACKWARD_MARKER
    try:
        proto = onnx.load(path, load_external_data=False)
    except Exception:  # noqa: BLE001 - a best-effort check; reading the model reports the real error
        return False
    return not any(BACKWARD_MARKER in n.name for n in proto.graph.node) and not any(
        o.name.startswith("grad.") for o in proto.graph.output)


def forward_only_hint(path: str) -> str:
    """'; P is not a training graph ...' with the ``remc grad`` command when ``path`` is a forward model, else ''
    (for errors met before the graph is imported)."""
    if not forward_only(path):
        return ""
    return (f"; {path} is not a training graph (no node of a backward pass): build one with "
            f"'remc grad {path} -o train.onnx' and use that")
