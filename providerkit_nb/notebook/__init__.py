"""Notebook views. pandas and ipywidgets are imported here, never by ``import providerkit_nb``."""
