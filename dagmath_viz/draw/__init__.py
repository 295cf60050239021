"""Pictures: plotly figures, the safe DAG renderer and its geometry."""
