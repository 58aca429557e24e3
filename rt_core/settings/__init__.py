"""A run's settings, declared once: the options every door offers (`schema`), the
aggregation modes (`modes`), the endpoints a run calls (`endpoint`) and the stored
config and the request built from them (`run_config`).

The CLI's flags (rt_core/cli/options.py), the app's fields (studio/run_fields.py), the
checks before a run (rt_core/run/pipeline/validation.py) and RunConfig's defaults all read the
schema, so no door offers, names or bounds an option by itself.
"""
