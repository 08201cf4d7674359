"""Transport: the HTTP seam (httpx or requests), SSE reading, and the error envelope."""
