"""dispatchlab analysis: reads run directories written by `dlab` and renders tables and reports.

Column meanings come from each run's JSON sidecar (written from the C++ schema), so this package
holds no second copy of the schema.
"""
