"""loader"""
