"""``skillbridge eval``: every task of a suite on K seeds, in W worker processes.

Each (task, seed) is one recorded run of the real runner (planner -> bridge -> skill
policies -> physics), so every failure can be replayed from its episode. Per episode:

- **planning success** (tasks not to be refused): the planner did not decline, and its
  first accepted plan achieves the goal when executed *symbolically* from the initial world
  with the skills' ``effect()`` functions: the plan is right, whatever physics does next;
- **execution success**: the goal holds in the world state computed from physics at the end
  (a declined task never counts as executed);
- **refusal**: a task marked ``refuse`` is handled correctly when the run ends ``refused``
  with nothing executed; a task not so marked that ends ``refused`` is a *false refusal*.

Every rate comes with its episode count and a 95% Wilson interval. The report breaks the
failures down by category, by cause, by skill and by bridge rejection code, and lists
tokens and wall time per task. Output folder::

    report.json  report.md  success_by_category.png  failure_causes.png  episodes/<task>/...
    eval-state.json  results.jsonl

The modules, in the order an eval uses them: :mod:`~skillbridge.evaluation.suite` (the task
files), :mod:`~skillbridge.evaluation.config` (the settings), :mod:`~skillbridge.evaluation.jobs`
(one job per task and seed, run end to end into an :mod:`~skillbridge.evaluation.record`),
:mod:`~skillbridge.evaluation.pool` (worker processes; :mod:`~skillbridge.evaluation.ray_jobs`
on Ray), :mod:`~skillbridge.evaluation.state` (what ``--resume`` continues from),
:mod:`~skillbridge.evaluation.report` (the rates and claims) and
:mod:`~skillbridge.evaluation.pages` (report.json, report.md and the plots), tied together
by :func:`skillbridge.evaluation.run.evaluate`.
"""
