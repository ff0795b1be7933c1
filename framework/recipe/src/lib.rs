//! Recipes: the RON schema, validation with line and column errors, and the recipe digest.
