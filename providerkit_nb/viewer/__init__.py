"""The one renderer of transcripts as HTML: the report file, the notebook's static display."""
