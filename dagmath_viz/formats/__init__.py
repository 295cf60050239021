"""Input formats: discovery of a folder, reading every layout, reading one record back."""
