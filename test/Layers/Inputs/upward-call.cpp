// A layer's object calling into the layer above it (Transforms -> Conversion)
// and into its own: linked as the layer check links a layer, only the upward
// call is undefined (test/Layers/link-check.test). -DUPWARD selects it.
namespace mlir {
class RewritePatternSet;
namespace conv3d {
void populateFuseEpiloguePatterns(RewritePatternSet &patterns);   // Transforms
void populateTileOpsToLoopsPatterns(RewritePatternSet &patterns); // Conversion
} // namespace conv3d
} // namespace mlir

void *callees[] = {
    reinterpret_cast<void *>(&mlir::conv3d::populateFuseEpiloguePatterns),
#ifdef UPWARD
    reinterpret_cast<void *>(&mlir::conv3d::populateTileOpsToLoopsPatterns),
#endif
};
