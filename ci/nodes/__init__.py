"""The nodes: the inventory, what a healthy node shows, and checking them over SSH."""
