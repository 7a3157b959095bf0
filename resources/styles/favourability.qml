<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<!-- Lodestar favourability surface (0-1, nodata outside the analysed area): five classes of a viridis ramp,
     each with its label in the legend; nodata cells are transparent. -->
<qgis version="3.22.0" styleCategories="AllStyleCategories" hasScaleBasedVisibilityFlag="0" minScale="1e+08" maxScale="0">
  <customproperties>
    <Option type="Map">
      <Option type="QString" value="Value" name="identify/format"/>
    </Option>
  </customproperties>
  <pipe>
    <provider>
      <resampling enabled="false" zoomedInResamplingMethod="nearestNeighbour" zoomedOutResamplingMethod="nearestNeighbour" maxOversampling="2"/>
    </provider>
    <rasterrenderer type="singlebandpseudocolor" band="1" opacity="1" alphaBand="-1" classificationMin="0" classificationMax="1" nodataColor="0,0,0,0">
      <minMaxOrigin>
        <limits>None</limits>
        <extent>WholeRaster</extent>
        <statAccuracy>Estimated</statAccuracy>
        <cumulativeCutLower>0.02</cumulativeCutLower>
        <cumulativeCutUpper>0.98</cumulativeCutUpper>
        <stdDevFactor>2</stdDevFactor>
      </minMaxOrigin>
      <rastershader>
        <colorrampshader colorRampType="DISCRETE" classificationMode="1" minimumValue="0" maximumValue="1" clip="1" labelPrecision="1">
          <item value="0.2" color="#472d7b" alpha="255" label="0.0 - 0.2 very low"/>
          <item value="0.4" color="#3b528b" alpha="255" label="0.2 - 0.4 low"/>
          <item value="0.6" color="#21918c" alpha="255" label="0.4 - 0.6 moderate"/>
          <item value="0.8" color="#5ec962" alpha="255" label="0.6 - 0.8 high"/>
          <item value="1" color="#fde725" alpha="255" label="0.8 - 1.0 very high"/>
          <rampLegendSettings useContinuousLegend="0" orientation="2" direction="0" prefix="" suffix="" minimumLabel="" maximumLabel=""/>
        </colorrampshader>
      </rastershader>
    </rasterrenderer>
    <brightnesscontrast brightness="0" contrast="0" gamma="1"/>
    <huesaturation saturation="0" grayscaleMode="0" invertColors="0" colorizeOn="0" colorizeRed="255" colorizeGreen="128" colorizeBlue="128" colorizeStrength="100"/>
    <rasterresampler maxOversampling="2"/>
    <resamplingStage>resamplingFilter</resamplingStage>
  </pipe>
  <blendMode>0</blendMode>
</qgis>
