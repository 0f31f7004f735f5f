c = get_config(); load_subconfig("course_config.py")  # noqa: F821 - nbgrader reads only this file; the course lives in course_config.py
