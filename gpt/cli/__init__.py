"""The command-line programs, installed as console scripts (setup.cfg) and run by the thin
wrappers in examples/:

    tensorgrad-train      gpt/cli/train.py      python -m gpt.cli.train      examples/train_shakespeare.py
    tensorgrad-probe      gpt/cli/probe.py      python -m gpt.cli.probe      examples/probe.py
    tensorgrad-generate   gpt/cli/generate.py   python -m gpt.cli.generate   examples/generate.py
    tensorgrad-inspect    gpt/cli/inspect_model.py  python -m gpt.cli.inspect_model  examples/inspect_model.py
    tensorgrad-reproduce  gpt/cli/reproduce.py  python -m gpt.cli.reproduce  examples/reproduce.py

Each has `main(argv=None)`.  Expected failures (bad flags, missing or corrupt files, a locked or
finished run, Ctrl-C) end as one line starting with `error:` and a non-zero exit status.
"""
